/* The C side of the C-ABI overhead benchmark (ffi-c/bench/run.sh runs it next to
 * next_id.rs in the same run). Prints one line per case: `c-<link> <case> <ns per call>`.
 * Same layout, clocks, iteration count and best-of-15 statistic as the Rust side, and the
 * same two more cases: `leased` (a node id leased from an embedded registry in a temporary
 * directory, system clock, 41 / 2 / 20) and `segment` (a key of a SQLite file in a
 * temporary directory, step 2^30); then `mask` and `unmask`, a 63-bit keyed mask of one
 * number per call. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, mkdtemp under -std=c99 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ferroflake.h"

#define ROUNDS 15

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static volatile uint64_t sink;

/* The lowest, over ROUNDS, mean cost of one call in ns (least disturbed by other load).
 * One copy per call, so each loop calls its function directly, as a user's loop would. */
#define BEST_NS(name, handle_type, call)                                   \
    static double name(const handle_type *h, uint64_t iterations) {       \
        double samples[ROUNDS];                                            \
        int round;                                                         \
        for (round = 0; round < ROUNDS; round++) {                         \
            uint64_t i, acc = 0, id = 0;                                   \
            double start = now_ns();                                       \
            for (i = 0; i < iterations; i++) {                             \
                if (call(h, &id) != FERROFLAKE_RESULT_OK) abort();         \
                acc ^= id;                                                 \
            }                                                              \
            samples[round] = (now_ns() - start) / (double)iterations;      \
            sink = acc;                                                    \
        }                                                                  \
        qsort(samples, ROUNDS, sizeof samples[0], by_value);               \
        return samples[0];                                                 \
    }

BEST_NS(best_ns, ferroflake_generator, ferroflake_generator_next_id)
/* The mask's cost per call, best of ROUNDS as above: each call takes the previous result,
 * so the calls form a chain the compiler cannot skip. */
static double best_mask_ns(const ferroflake_mask_keyring *keys, int unmask, uint64_t iterations) {
    double samples[ROUNDS];
    int round;
    for (round = 0; round < ROUNDS; round++) {
        uint64_t i, value = 1;
        double start = now_ns();
        for (i = 0; i < iterations; i++) {
            ferroflake_result rc = unmask ? ferroflake_mask_keyring_unmask(keys, 63, value, &value)
                                          : ferroflake_mask_keyring_mask(keys, 63, value, &value);
            if (rc != FERROFLAKE_RESULT_OK) abort();
        }
        samples[round] = (now_ns() - start) / (double)iterations;
        sink = value;
    }
    qsort(samples, ROUNDS, sizeof samples[0], by_value);
    return samples[0];
}

static int mask_case(const char *label, uint64_t iterations) {
    static const char key[] = "1:000102030405060708090a0b0c0d0e0f";
    ferroflake_mask_keyring *keys = NULL;
    if (ferroflake_mask_keyring_new(key, sizeof key - 1, &keys) != FERROFLAKE_RESULT_OK) return 1;
    printf("%s mask %.2f\n", label, best_mask_ns(keys, 0, iterations));
    printf("%s unmask %.2f\n", label, best_mask_ns(keys, 1, iterations));
    ferroflake_mask_keyring_free(keys);
    return 0;
}

#if defined(FERROFLAKE_UNIX)
BEST_NS(best_leased_ns, ferroflake_leased_generator, ferroflake_leased_generator_next_id)
BEST_NS(best_segment_ns, ferroflake_segment_key, ferroflake_segment_key_next_id)

static int leased_case(const char *label, const char *dir, uint64_t iterations) {
    const ferroflake_layout_spec spec = {41, 2, 20, 0, 1, INT64_C(1288834974657),
                                         FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE};
    ferroflake_layout *layout = NULL;
    ferroflake_lease_options options;
    ferroflake_leased_generator *g = NULL;
    if (FERROFLAKE_LEASE_OPTIONS_INIT(&options) != FERROFLAKE_RESULT_OK) return 1;
    options.ttl_ms = 2000;
    options.max_ttl_ms = 2000; /* a new registry makes the first holder wait 2 s */
    options.quarantine_ms = 10;
    if (ferroflake_layout_new(&spec, &layout) != FERROFLAKE_RESULT_OK) return 1;
    if (ferroflake_leased_generator_new(layout, dir, &options, &g) != FERROFLAKE_RESULT_OK) {
        fprintf(stderr, "lease: %s\n", ferroflake_last_error_message());
        return 1;
    }
    printf("%s leased %.2f\n", label, best_leased_ns(g, iterations));
    ferroflake_layout_free(layout);
    return ferroflake_leased_generator_release(g) != FERROFLAKE_RESULT_OK;
}

static int segment_case(const char *label, const char *dir, uint64_t iterations) {
    char path[512];
    ferroflake_segment_allocator *allocator = NULL;
    ferroflake_segment_key *key = NULL;
    snprintf(path, sizeof path, "%s/segments.db", dir);
    if (ferroflake_segment_allocator_new(path, NULL, &allocator) != FERROFLAKE_RESULT_OK
        || ferroflake_segment_allocator_create_key(allocator, "bench", 1, UINT64_C(1) << 30)
               != FERROFLAKE_RESULT_OK
        || ferroflake_segment_allocator_key(allocator, "bench", &key) != FERROFLAKE_RESULT_OK) {
        fprintf(stderr, "segment: %s\n", ferroflake_last_error_message());
        return 1;
    }
    printf("%s segment %.2f\n", label, best_segment_ns(key, iterations));
    ferroflake_segment_key_free(key);
    ferroflake_segment_allocator_free(allocator);
    return 0;
}
#endif

int main(int argc, char **argv) {
    static const char *names[] = {"manual", "fast", "system"};
    static const ferroflake_clock clocks[] = {FERROFLAKE_CLOCK_MANUAL, FERROFLAKE_CLOCK_FAST,
                                              FERROFLAKE_CLOCK_SYSTEM};
    const ferroflake_layout_spec spec = {41, 0, 22, 0, 1, INT64_C(1288834974657),
                                         FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE};
    const char *label = argc > 1 ? argv[1] : "c";
    const char *env = getenv("FERROFLAKE_BENCH_ITERATIONS");
    uint64_t iterations = env ? strtoull(env, NULL, 10) : 1000000;
    ferroflake_layout *layout = NULL;
    int i;
    if (ferroflake_layout_new(&spec, &layout) != FERROFLAKE_RESULT_OK) return 1;
    for (i = 0; i < 3; i++) {
        ferroflake_generator_options options;
        ferroflake_generator *g = NULL;
        FERROFLAKE_GENERATOR_OPTIONS_INIT(&options);
        options.clock = clocks[i];
        options.manual_start_ms = UINT64_C(1700000000000);
        if (ferroflake_generator_new(layout, 0, &options, &g) != FERROFLAKE_RESULT_OK) return 1;
        printf("%s %s %.2f\n", label, names[i], best_ns(g, iterations));
        ferroflake_generator_free(g);
    }
    ferroflake_layout_free(layout);
#if defined(FERROFLAKE_UNIX)
    {
        char dir[] = "/tmp/ferroflake-c-bench-XXXXXX", command[64];
        int failed;
        if (mkdtemp(dir) == NULL) return 1;
        failed = leased_case(label, dir, iterations) || segment_case(label, dir, iterations);
        snprintf(command, sizeof command, "rm -rf '%s'", dir);
        if (system(command) != 0 || failed) return 1;
    }
#endif
    return mask_case(label, iterations);
}
