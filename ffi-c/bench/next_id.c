/* The C side of the C-ABI overhead benchmark (ffi-c/bench/run.sh runs it next to
 * next_id.rs in the same run). Prints one line per case: `c-<link> <case> <ns per call>`.
 * Same layout, clocks, iteration count and best-of-15 statistic as the Rust side. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */
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

/* The lowest, over ROUNDS, mean cost of one call in ns (least disturbed by other load). */
static double best_ns(const ferroflake_generator *g, uint64_t iterations) {
    double samples[ROUNDS];
    int round;
    for (round = 0; round < ROUNDS; round++) {
        uint64_t i, acc = 0, id = 0;
        double start = now_ns();
        for (i = 0; i < iterations; i++) {
            if (ferroflake_generator_next_id(g, &id) != FERROFLAKE_RESULT_OK) abort();
            acc ^= id;
        }
        samples[round] = (now_ns() - start) / (double)iterations;
        sink = acc;
    }
    qsort(samples, ROUNDS, sizeof samples[0], by_value);
    return samples[0];
}

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
        ferroflake_generator_options_default(&options);
        options.clock = clocks[i];
        options.manual_start_ms = UINT64_C(1700000000000);
        if (ferroflake_generator_new(layout, 0, &options, &g) != FERROFLAKE_RESULT_OK) return 1;
        printf("%s %s %.2f\n", label, names[i], best_ns(g, iterations));
        ferroflake_generator_free(g);
    }
    ferroflake_layout_free(layout);
    return 0;
}
