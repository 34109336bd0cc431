/* The C API's contract: every result code, NULL and short-buffer and unknown-enum refusals
 * with untouched out-parameters, layouts, and the generator's options and guarantees on a
 * manual clock (so rollbacks, waits and fences are deterministic). */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, alarm */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define START_MS UINT64_C(1700000000000)

/* Which result codes some call in this file produced, to prove every reachable code is. */
static unsigned char seen[256];

#define EXPECT(call, want)                                                       \
    do {                                                                         \
        CHECK_CODE(call, want);                                                  \
        seen[(want)] = 1;                                                        \
    } while (0)

static const ferroflake_result all_codes[] = {
    FERROFLAKE_RESULT_OK,
    FERROFLAKE_RESULT_TOO_MANY_BITS,
    FERROFLAKE_RESULT_NO_TIME_BITS,
    FERROFLAKE_RESULT_ZERO_SEQUENCE_BITS,
    FERROFLAKE_RESULT_ZERO_TICK,
    FERROFLAKE_RESULT_EPOCH_BEFORE_UNIX,
    FERROFLAKE_RESULT_EPOCH_IN_FUTURE,
    FERROFLAKE_RESULT_LAYOUT_EXHAUSTED,
    FERROFLAKE_RESULT_NODE_OUT_OF_RANGE,
    FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE,
    FERROFLAKE_RESULT_SEQUENCE_OUT_OF_RANGE,
    FERROFLAKE_RESULT_TIMESTAMP_OUT_OF_RANGE,
    FERROFLAKE_RESULT_ID_OUT_OF_RANGE,
    FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS,
    FERROFLAKE_RESULT_CLOCK_STALLED,
    FERROFLAKE_RESULT_LEASE_EXPIRED,
    FERROFLAKE_RESULT_UNKNOWN_LAYOUT,
    FERROFLAKE_RESULT_PARSE_EMPTY,
    FERROFLAKE_RESULT_PARSE_NEGATIVE,
    FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER,
    FERROFLAKE_RESULT_PARSE_WRONG_LENGTH,
    FERROFLAKE_RESULT_PARSE_TOO_LONG,
    FERROFLAKE_RESULT_PARSE_OVERFLOW,
    FERROFLAKE_RESULT_RESUME_IN_FUTURE,
    FERROFLAKE_RESULT_GENERATOR_FORKED,
    FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE,
    FERROFLAKE_RESULT_MASK_KEY_VERSION_OUT_OF_RANGE,
    FERROFLAKE_RESULT_UNKNOWN_MASK_KEY_VERSION,
    FERROFLAKE_RESULT_DUPLICATE_MASK_KEY_VERSION,
    FERROFLAKE_RESULT_NODE_IN_USE,
    FERROFLAKE_RESULT_NULL_ARGUMENT,
    FERROFLAKE_RESULT_BUFFER_TOO_SMALL,
    FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE,
    FERROFLAKE_RESULT_PANIC,
    FERROFLAKE_RESULT_INVALID_UTF8,
    FERROFLAKE_RESULT_NOT_MANUAL_CLOCK,
    FERROFLAKE_RESULT_UNMAPPED_ERROR,
    FERROFLAKE_RESULT_BUFFER_TOO_LARGE,
    FERROFLAKE_RESULT_STRUCT_SIZE,
    FERROFLAKE_RESULT_BAD_ADDRESS,
    FERROFLAKE_RESULT_NOT_BUILT,
    FERROFLAKE_RESULT_UNAVAILABLE,
    FERROFLAKE_RESULT_STORE_ERROR,
    FERROFLAKE_RESULT_INVALID_CONFIG,
    FERROFLAKE_RESULT_NO_FREE_NODE,
    FERROFLAKE_RESULT_LEASE_LOST,
    FERROFLAKE_RESULT_BEHIND_HIGH_WATER,
    FERROFLAKE_RESULT_UNKNOWN_KEY,
    FERROFLAKE_RESULT_KEY_EXISTS,
    FERROFLAKE_RESULT_INVALID_KEY,
    FERROFLAKE_RESULT_KEY_EXHAUSTED,
    FERROFLAKE_RESULT_NOT_READY,
    FERROFLAKE_RESULT_CLOSED,
    FERROFLAKE_RESULT_REWOUND,
};
#define CODE_COUNT (sizeof all_codes / sizeof all_codes[0])

/* Codes no call from C can produce on purpose: a panic or an unmapped core error would be
 * a bug, and the ID mask is not part of the C interface. The Rust unit tests in ffi-c/src
 * cover these paths. */
static int unreachable_from_c(ferroflake_result code) {
    return code == FERROFLAKE_RESULT_PANIC || code == FERROFLAKE_RESULT_UNMAPPED_ERROR
           || (code >= FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE
               && code <= FERROFLAKE_RESULT_DUPLICATE_MASK_KEY_VERSION);
}

/* Codes of leases and segments: lease.c and segment.c produce them. */
static int produced_elsewhere(ferroflake_result code) {
    return code >= FERROFLAKE_RESULT_BAD_ADDRESS && code <= FERROFLAKE_RESULT_REWOUND;
}

static ferroflake_layout *preset(ferroflake_preset which) {
    ferroflake_layout *layout = NULL;
    EXPECT(ferroflake_layout_new_preset(which, &layout), FERROFLAKE_RESULT_OK);
    return layout;
}

static ferroflake_generator_options manual_options(uint64_t start_ms) {
    ferroflake_generator_options options;
    CHECK_OK(FERROFLAKE_GENERATOR_OPTIONS_INIT(&options));
    options.clock = FERROFLAKE_CLOCK_MANUAL;
    options.manual_start_ms = start_ms;
    return options;
}

/* The result of making a generator of a preset (the layout is freed again). */
static ferroflake_result new_generator(ferroflake_preset which, uint64_t node,
                                       const ferroflake_generator_options *options,
                                       ferroflake_generator **out) {
    ferroflake_layout *layout = preset(which);
    ferroflake_result result = ferroflake_generator_new(layout, node, options, out);
    ferroflake_layout_free(layout);
    return result;
}

static ferroflake_generator *manual_generator(ferroflake_preset which, uint64_t node,
                                              const ferroflake_generator_options *options) {
    ferroflake_layout *layout = preset(which);
    ferroflake_generator *generator = NULL;
    CHECK_OK(ferroflake_generator_new(layout, node, options, &generator));
    /* The generator keeps its own copy: freeing the layout now must be safe (valgrind and
     * ASan would catch a use after free below). */
    ferroflake_layout_free(layout);
    return generator;
}

static uint64_t timestamp_of(const ferroflake_generator *generator, uint64_t id) {
    ferroflake_layout *layout = NULL;
    ferroflake_parts parts;
    CHECK_OK(ferroflake_generator_get_layout(generator, &layout));
    CHECK_OK(ferroflake_layout_decode(layout, id, &parts));
    ferroflake_layout_free(layout);
    return parts.timestamp_ms;
}

static void messages_exist_for_every_code_and_unknown_numbers(void) {
    size_t i, j;
    static const uint32_t unknown[] = {99, 1000, 4096, UINT32_MAX};
    for (i = 0; i < CODE_COUNT; i++) {
        const char *text = ferroflake_result_message(all_codes[i]);
        assert(text != NULL && text[0] != '\0');
        assert(strcmp(text, "unknown ferroflake result code") != 0);
        for (j = 0; j < i; j++) {
            assert(strcmp(text, ferroflake_result_message(all_codes[j])) != 0);
        }
    }
    for (i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *text = ferroflake_result_message(unknown[i]);
        assert(text != NULL);
        assert(strcmp(text, "unknown ferroflake result code") == 0);
    }
    /* Codes are part of the ABI: spot-check that none moved. */
    assert(FERROFLAKE_RESULT_OK == 0 && FERROFLAKE_RESULT_PARSE_OVERFLOW == 22);
    assert(FERROFLAKE_RESULT_RESUME_IN_FUTURE == 23 && FERROFLAKE_RESULT_GENERATOR_FORKED == 24);
    assert(FERROFLAKE_RESULT_NULL_ARGUMENT == 100 && FERROFLAKE_RESULT_BUFFER_TOO_LARGE == 107);
    assert(FERROFLAKE_RESULT_DUPLICATE_MASK_KEY_VERSION == 28 && FERROFLAKE_RESULT_REWOUND == 123);
}

static void version_matches_the_header(void) {
    char joined[64];
    assert(strcmp(ferroflake_version(), FERROFLAKE_VERSION) == 0);
    snprintf(joined, sizeof joined, "%d.%d.%d", FERROFLAKE_VERSION_MAJOR,
             FERROFLAKE_VERSION_MINOR, FERROFLAKE_VERSION_PATCH);
    assert(strcmp(joined, FERROFLAKE_VERSION) == 0);
}

static void layouts_are_validated(void) {
    static char sentinel;
    ferroflake_layout *const untouched = (ferroflake_layout *)(void *)&sentinel;
    ferroflake_layout *layout = untouched;
    ferroflake_layout_spec spec = {41, 10, 12, 0, 1, 0, FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE};
    ferroflake_layout_spec bad;
    ferroflake_layout_limits limits;
    uint64_t value = 0;

    EXPECT(ferroflake_layout_new_preset(FERROFLAKE_PRESET_SHARDED + 1, &layout),
           FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    EXPECT(ferroflake_layout_new_preset(UINT32_MAX, &layout), FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    EXPECT(ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, NULL),
           FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_new_named("snowflake", &layout), FERROFLAKE_RESULT_UNKNOWN_LAYOUT);
    EXPECT(ferroflake_layout_new_named("twit\xffter", &layout), FERROFLAKE_RESULT_INVALID_UTF8);
    EXPECT(ferroflake_layout_new_named(NULL, &layout), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_new_named("twitter", NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_new(NULL, &layout), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_new(&spec, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);

    bad = spec;
    bad.order = 2;
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    bad = spec;
    bad.time_bits = 42;
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_TOO_MANY_BITS);
    bad = spec;
    bad.shard_bits = UINT32_MAX; /* saturates in the core instead of wrapping to a small sum */
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_TOO_MANY_BITS);
    bad = spec;
    bad.time_bits = 0;
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_NO_TIME_BITS);
    bad = spec;
    bad.sequence_bits = 0;
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_ZERO_SEQUENCE_BITS);
    bad = spec;
    bad.tick_ms = 0;
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_ZERO_TICK);
    bad = spec;
    bad.epoch_ms = -1;
    EXPECT(ferroflake_layout_new(&bad, &layout), FERROFLAKE_RESULT_EPOCH_BEFORE_UNIX);
    assert(layout == untouched);

    /* Names are ASCII case-insensitive, as in the core. */
    layout = NULL;
    EXPECT(ferroflake_layout_new_named("TWITTER", &layout), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_layout_get_limits(layout, &limits), FERROFLAKE_RESULT_OK);
    assert(limits.total_bits == 63 && limits.max_node == 1023 && limits.max_sequence == 4095);
    assert(limits.max_shard == 0 && limits.max_id == (uint64_t)INT64_MAX);
    assert(limits.capacity_per_second == 4096000);
    EXPECT(ferroflake_layout_get_limits(layout, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_get_limits(NULL, &limits), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_get_spec(NULL, &spec), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_get_spec(layout, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_capacity_per_second(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_capacity_per_second(layout, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_exhausts_at_ms(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_exhausts_at_ms(layout, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_exhausts_at_ms(layout, &value), FERROFLAKE_RESULT_OK);
    assert(value == limits.exhausts_at_ms);
    ferroflake_layout_free(layout);
    ferroflake_layout_free(NULL);

    EXPECT(ferroflake_layout_twitter_node(3, 7, &value), FERROFLAKE_RESULT_OK);
    assert(value == (3 << 5 | 7));
    EXPECT(ferroflake_layout_twitter_node(32, 0, &value), FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
    EXPECT(ferroflake_layout_twitter_node(0, 32, &value), FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
    EXPECT(ferroflake_layout_twitter_node(1, 1, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(value == (3 << 5 | 7));
}

static void compose_and_decode_refuse_what_does_not_fit(void) {
    ferroflake_layout *twitter = preset(FERROFLAKE_PRESET_TWITTER);
    ferroflake_layout *js53 = preset(FERROFLAKE_PRESET_JS53);
    ferroflake_parts parts = {START_MS, 5, 6, 0};
    ferroflake_parts bad, decoded = {9, 9, 9, 9};
    uint64_t id = 0, untouched;

    EXPECT(ferroflake_layout_compose(twitter, &parts, &id), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_layout_decode(twitter, id, &decoded), FERROFLAKE_RESULT_OK);
    assert(decoded.timestamp_ms == START_MS && decoded.node == 5 && decoded.sequence == 6);
    untouched = id;

    bad = parts;
    bad.timestamp_ms = 1; /* before Twitter's epoch */
    EXPECT(ferroflake_layout_compose(twitter, &bad, &id), FERROFLAKE_RESULT_TIMESTAMP_OUT_OF_RANGE);
    bad = parts;
    bad.node = 1024;
    EXPECT(ferroflake_layout_compose(twitter, &bad, &id), FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
    bad = parts;
    bad.sequence = 4096;
    EXPECT(ferroflake_layout_compose(twitter, &bad, &id), FERROFLAKE_RESULT_SEQUENCE_OUT_OF_RANGE);
    bad = parts;
    bad.shard = 1;
    EXPECT(ferroflake_layout_compose(twitter, &bad, &id), FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE);
    EXPECT(ferroflake_layout_compose(NULL, &parts, &id), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_compose(twitter, NULL, &id), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_compose(twitter, &parts, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(id == untouched);

    /* js53 ids stop below 2^53; the sign bit is never part of any layout. */
    EXPECT(ferroflake_layout_decode(js53, UINT64_C(1) << 53, &decoded), FERROFLAKE_RESULT_ID_OUT_OF_RANGE);
    EXPECT(ferroflake_layout_decode(twitter, UINT64_MAX, &decoded), FERROFLAKE_RESULT_ID_OUT_OF_RANGE);
    EXPECT(ferroflake_layout_decode(NULL, 1, &decoded), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_decode(twitter, 1, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(decoded.timestamp_ms == START_MS && decoded.node == 5 && decoded.sequence == 6);
    ferroflake_layout_free(twitter);
    ferroflake_layout_free(js53);
}

static void generators_refuse_bad_settings(void) {
    ferroflake_layout *twitter = preset(FERROFLAKE_PRESET_TWITTER);
    ferroflake_layout *tiny = NULL;
    ferroflake_layout_spec tiny_spec = {10, 2, 2, 0, 1, 0, FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE};
    ferroflake_generator *generator = NULL;
    ferroflake_generator_options options = manual_options(START_MS);

    EXPECT(ferroflake_generator_new(NULL, 1, &options, &generator), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_new(twitter, 1, &options, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_new(twitter, 1024, &options, &generator),
           FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
    options.clock = 3;
    EXPECT(ferroflake_generator_new(twitter, 1, &options, &generator),
           FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    options = manual_options(1000); /* 1970: before Twitter's epoch */
    EXPECT(ferroflake_generator_new(twitter, 1, &options, &generator),
           FERROFLAKE_RESULT_EPOCH_IN_FUTURE);
    EXPECT(ferroflake_layout_new(&tiny_spec, &tiny), FERROFLAKE_RESULT_OK);
    options = manual_options(START_MS); /* 2^10 ms after 1970 have long passed */
    EXPECT(ferroflake_generator_new(tiny, 1, &options, &generator),
           FERROFLAKE_RESULT_LAYOUT_EXHAUSTED);
    assert(generator == NULL);
    EXPECT(ferroflake_generator_options_init(sizeof options, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);

    /* NULL options: the defaults (system clock). */
    EXPECT(ferroflake_generator_new(twitter, 1, NULL, &generator), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_set_clock_ms(generator, START_MS), FERROFLAKE_RESULT_NOT_MANUAL_CLOCK);
    EXPECT(ferroflake_generator_advance_clock_ms(generator, 1), FERROFLAKE_RESULT_NOT_MANUAL_CLOCK);
    EXPECT(ferroflake_generator_rewind_clock_ms(generator, 1), FERROFLAKE_RESULT_NOT_MANUAL_CLOCK);
    ferroflake_generator_free(generator);
    ferroflake_generator_free(NULL);
    ferroflake_layout_free(tiny);
    ferroflake_layout_free(twitter);
}

static void null_generators_are_refused_everywhere(void) {
    uint64_t value = 42, ids[2] = {1, 2};
    ferroflake_counters counters;
    ferroflake_layout *layout = NULL;
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_TWITTER, 1, &options);

    EXPECT(ferroflake_generator_next_id(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_next_id(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_next_id_for_shard(NULL, 0, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_next_id_for_shard(g, 0, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_next_ids(NULL, ids, 2), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_next_ids(g, NULL, 2), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_counters(NULL, &counters), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_counters(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_node(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_node(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_get_layout(NULL, &layout), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_get_layout(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_last_issued_ms(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_last_issued_ms(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_set_fence_ms(NULL, 1), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_clear_fence(NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_fence_ms(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_fence_ms(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_clock_now_ms(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_clock_now_ms(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_set_clock_ms(NULL, 1), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_advance_clock_ms(NULL, 1), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_generator_rewind_clock_ms(NULL, 1), FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(value == 42 && ids[0] == 1 && ids[1] == 2 && layout == NULL);
    ferroflake_generator_free(g);
}

static void ids_increase_and_decode_to_the_clock_and_node(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_TWITTER, 77, &options);
    ferroflake_layout *layout = NULL;
    ferroflake_layout_spec spec;
    ferroflake_parts parts;
    uint64_t previous = 0, id = 0, node = 0, last = 0, now = 0;
    int i;

    EXPECT(ferroflake_generator_node(g, &node), FERROFLAKE_RESULT_OK);
    assert(node == 77);
    EXPECT(ferroflake_generator_get_layout(g, &layout), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_layout_get_spec(layout, &spec), FERROFLAKE_RESULT_OK);
    assert(spec.time_bits == 41 && spec.node_bits == 10 && spec.epoch_ms == INT64_C(1288834974657));
    for (i = 0; i < 1000; i++) {
        EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
        assert(id > previous);
        previous = id;
    }
    EXPECT(ferroflake_layout_decode(layout, id, &parts), FERROFLAKE_RESULT_OK);
    assert(parts.timestamp_ms == START_MS && parts.node == 77 && parts.sequence == 999);
    EXPECT(ferroflake_generator_last_issued_ms(g, &last), FERROFLAKE_RESULT_OK);
    assert(last == START_MS);
    EXPECT(ferroflake_generator_advance_clock_ms(g, 10), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_clock_now_ms(g, &now), FERROFLAKE_RESULT_OK);
    assert(now == START_MS + 10);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(timestamp_of(g, id) == START_MS + 10);
    ferroflake_layout_free(layout);
    ferroflake_generator_free(g);
}

static void a_used_up_sequence_waits_for_the_next_tick(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_TWITTER, 2, &options);
    ferroflake_counters counters;
    uint64_t id = 0, now = 0;
    int i;
    for (i = 0; i < 4096; i++) {
        EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    }
    EXPECT(ferroflake_generator_counters(g, &counters), FERROFLAKE_RESULT_OK);
    assert(counters.waits == 0);
    /* The 4097th id: the manual clock is "waited on", which moves it to the next ms. */
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(timestamp_of(g, id) == START_MS + 1);
    EXPECT(ferroflake_generator_clock_now_ms(g, &now), FERROFLAKE_RESULT_OK);
    assert(now == START_MS + 1);
    EXPECT(ferroflake_generator_counters(g, &counters), FERROFLAKE_RESULT_OK);
    assert(counters.waits == 1 && counters.borrowed_ticks == 0 && counters.rollbacks == 0);
    ferroflake_generator_free(g);
}

static void a_clock_rollback_is_refused_then_recovered(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_TWITTER, 4, &options);
    ferroflake_counters counters;
    uint64_t first = 0, id = 0, untouched;

    EXPECT(ferroflake_generator_next_id(g, &first), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_rewind_clock_ms(g, 3600000), FERROFLAKE_RESULT_OK);
    id = untouched = 0xfeed;
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
    assert(id == untouched);
    /* Within the 5 ms backward wait: the manual clock is waited forward and the call works. */
    EXPECT(ferroflake_generator_set_clock_ms(g, START_MS - 3), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(id > first);
    EXPECT(ferroflake_generator_counters(g, &counters), FERROFLAKE_RESULT_OK);
    assert(counters.rollbacks >= 1 && counters.waits == 0);
    EXPECT(ferroflake_generator_advance_clock_ms(g, 3600000), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(id > first);
    ferroflake_generator_free(g);
}

static void drift_rides_out_small_rollbacks_and_borrows_ticks(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g;
    ferroflake_counters counters;
    uint64_t previous = 0, id = 0, now = 0;
    int i;

    options.max_drift_ticks = 2;
    options.max_backward_wait_ms = 0;
    g = manual_generator(FERROFLAKE_PRESET_TWITTER, 5, &options);
    EXPECT(ferroflake_generator_next_id(g, &previous), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_rewind_clock_ms(g, 2), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(id > previous && timestamp_of(g, id) == START_MS);
    EXPECT(ferroflake_generator_set_clock_ms(g, START_MS), FERROFLAKE_RESULT_OK);
    /* Three ticks' worth of ids without moving the clock: two are borrowed ahead. */
    for (i = 0; i < 3 * 4096 - 2; i++) {
        previous = id;
        EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
        assert(id > previous);
    }
    assert(timestamp_of(g, id) == START_MS + 2);
    EXPECT(ferroflake_generator_clock_now_ms(g, &now), FERROFLAKE_RESULT_OK);
    assert(now == START_MS);
    EXPECT(ferroflake_generator_counters(g, &counters), FERROFLAKE_RESULT_OK);
    assert(counters.borrowed_ticks == 2 && counters.rollbacks == 0);
    ferroflake_generator_free(g);

    /* Beyond the drift, with no wait allowed: refused. */
    options = manual_options(START_MS);
    options.max_backward_wait_ms = 0;
    g = manual_generator(FERROFLAKE_PRESET_TWITTER, 6, &options);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_rewind_clock_ms(g, 1), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
    ferroflake_generator_free(g);
}

static void resume_after_skips_the_previous_holders_ticks(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g;
    uint64_t id = 0, last = 0;
    options.has_resume_after = 1;
    options.resume_after_ms = START_MS + 3; /* within the 5 ms backward wait */
    g = manual_generator(FERROFLAKE_PRESET_TWITTER, 8, &options);
    EXPECT(ferroflake_generator_last_issued_ms(g, &last), FERROFLAKE_RESULT_OK);
    assert(last == START_MS + 3);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(timestamp_of(g, id) == START_MS + 4);
    ferroflake_generator_free(g);
}

/* A sonyflake fleet's highest id, and a Twitter-layout generator started above it. */
static void resume_after_id_starts_above_an_old_generators_id(void) {
    ferroflake_layout *twitter = preset(FERROFLAKE_PRESET_TWITTER);
    ferroflake_layout *sonyflake = preset(FERROFLAKE_PRESET_SONYFLAKE);
    ferroflake_layout *js53 = preset(FERROFLAKE_PRESET_JS53);
    ferroflake_parts parts = {START_MS, 3, 255, 0};
    ferroflake_generator_options options;
    ferroflake_generator *g;
    uint64_t old_id = 0, after = 0, same = 0, id = 0;

    EXPECT(ferroflake_layout_compose(sonyflake, &parts, &old_id), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_layout_resume_after_id(twitter, old_id, sonyflake, &after),
           FERROFLAKE_RESULT_OK);
    assert(after == START_MS / 10 * 10 + 9); /* the end of the old id's 10 ms tick */
    options = manual_options(after);
    options.has_resume_after = 1;
    options.resume_after_ms = after;
    g = manual_generator(FERROFLAKE_PRESET_TWITTER, 22, &options);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(id > old_id && timestamp_of(g, id) > after);
    ferroflake_generator_free(g);

    /* NULL reads the old id with the layout itself. */
    EXPECT(ferroflake_layout_resume_after_id(twitter, id, NULL, &same), FERROFLAKE_RESULT_OK);
    assert(same == after + 1);
    EXPECT(ferroflake_layout_resume_after_id(js53, UINT64_C(1) << 60, NULL, &same),
           FERROFLAKE_RESULT_ID_OUT_OF_RANGE);
    EXPECT(ferroflake_layout_resume_after_id(NULL, 1, NULL, &same), FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_layout_resume_after_id(twitter, 1, NULL, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(same == after + 1);
    ferroflake_layout_free(twitter);
    ferroflake_layout_free(sonyflake);
    ferroflake_layout_free(js53);
}

/* The first node id huge_tick_generator takes; no other test uses it or those after it. */
#define HUGE_TICK_NODES 40

/* One time bit of `tick_ms` from a second before START_MS, six node bits, one sequence bit.
 * Each call takes its own node id: a tick this long keeps a node id's IDs ahead of any clock
 * for good, so no later generator of the process may have it. */
static ferroflake_generator *huge_tick_generator(uint64_t tick_ms,
                                                 const ferroflake_generator_options *options) {
    static uint64_t next_node = HUGE_TICK_NODES;
    ferroflake_layout_spec spec = {1, 6, 1, 0, 0, 0, FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE};
    ferroflake_layout *layout = NULL;
    ferroflake_generator *g = NULL;
    spec.tick_ms = tick_ms;
    spec.epoch_ms = options->clock == FERROFLAKE_CLOCK_MANUAL ? (int64_t)(START_MS - 1000) : 0;
    EXPECT(ferroflake_layout_new(&spec, &layout), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_new(layout, next_node++, options, &g), FERROFLAKE_RESULT_OK);
    ferroflake_layout_free(layout);
    return g;
}

/* The largest backward wait and ticks near UINT64_MAX: ids or typed errors, never a crash.
 * (tick + backward wait used to overflow: a panic in debug builds, a false CLOCK_STALLED in
 * release; the system clock's wait panicked on such a tick.) */
static void extreme_waits_and_ticks_give_ids_or_typed_errors(void) {
    static const uint64_t ticks[] = {UINT64_MAX, UINT64_MAX / 2, UINT64_C(172800000)};
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g;
    uint64_t id = 0, previous = 0, now = 0;
    size_t i;
    int n;

    options.max_backward_wait_ms = UINT64_MAX;
    g = manual_generator(FERROFLAKE_PRESET_TWITTER, 10, &options);
    for (n = 0; n < 4097; n++) {
        EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
        assert(id > previous);
        previous = id;
    }
    assert(timestamp_of(g, id) == START_MS + 1); /* waited one tick, as with the default */
    /* "As long as the clock takes", up to a day: an hour back is waited out, two days not. */
    EXPECT(ferroflake_generator_rewind_clock_ms(g, 3600000), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(id > previous);
    EXPECT(ferroflake_generator_rewind_clock_ms(g, UINT64_C(172800000)), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
    /* The manual clock saturates rather than wrapping, in both directions. */
    EXPECT(ferroflake_generator_advance_clock_ms(g, UINT64_MAX), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_clock_now_ms(g, &now), FERROFLAKE_RESULT_OK);
    assert(now == UINT64_MAX);
    EXPECT(ferroflake_generator_rewind_clock_ms(g, UINT64_MAX - 5), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_clock_now_ms(g, &now), FERROFLAKE_RESULT_OK);
    assert(now == 5);
    ferroflake_generator_free(g);

    for (i = 0; i < sizeof ticks / sizeof ticks[0]; i++) {
        g = huge_tick_generator(ticks[i], &options);
        EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
        /* sequence 1 of tick 0: the tick's last id */
        assert(id == ((HUGE_TICK_NODES + (uint64_t)i) << 1 | 1));
        /* The next tick is more than a day away: refused at once, without waiting. */
        EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_CLOCK_STALLED);
        EXPECT(ferroflake_generator_clock_now_ms(g, &now), FERROFLAKE_RESULT_OK);
        assert(now == START_MS);
        ferroflake_generator_free(g);
    }
    CHECK_OK(FERROFLAKE_GENERATOR_OPTIONS_INIT(&options));
    options.max_backward_wait_ms = UINT64_MAX;
    g = huge_tick_generator(UINT64_MAX, &options); /* on the system clock */
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_CLOCK_STALLED);
    ferroflake_generator_free(g);
}

/* A resume point the generator could not issue after soon (or ever) is refused when the
 * generator is made, not reported later as a clock that went back. */
static void unreachable_resume_points_are_refused_up_front(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_layout *layout = preset(FERROFLAKE_PRESET_TWITTER);
    ferroflake_generator *g = NULL;
    uint64_t id = 0;
    options.has_resume_after = 1;
    options.resume_after_ms = START_MS + 60000;
    EXPECT(ferroflake_generator_new(layout, 11, &options, &g), FERROFLAKE_RESULT_RESUME_IN_FUTURE);
    assert(g == NULL);
    options.resume_after_ms = UINT64_MAX;
    options.max_backward_wait_ms = UINT64_MAX;
    EXPECT(ferroflake_generator_new(layout, 11, &options, &g), FERROFLAKE_RESULT_LAYOUT_EXHAUSTED);
    assert(g == NULL);
    /* A minute ahead is within the largest wait (a day): accepted, and waited for. */
    options.resume_after_ms = START_MS + 60000;
    EXPECT(ferroflake_generator_new(layout, 11, &options, &g), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(timestamp_of(g, id) == START_MS + 60001);
    ferroflake_generator_free(g);
    ferroflake_layout_free(layout);
}

static void a_fence_stops_issuing_until_cleared(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_TWITTER, 12, &options);
    uint64_t id = 0, fence = 0;
    EXPECT(ferroflake_generator_fence_ms(g, &fence), FERROFLAKE_RESULT_OK);
    assert(fence == FERROFLAKE_NO_FENCE);
    EXPECT(ferroflake_generator_set_fence_ms(g, START_MS + 5), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_fence_ms(g, &fence), FERROFLAKE_RESULT_OK);
    assert(fence == START_MS + 5);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_advance_clock_ms(g, 5), FERROFLAKE_RESULT_OK);
    id = 1;
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_LEASE_EXPIRED);
    assert(id == 1);
    EXPECT(ferroflake_generator_clear_fence(g), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(timestamp_of(g, id) == START_MS + 5);
    ferroflake_generator_free(g);
}

static void shards_land_in_the_low_bits(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_SHARDED, 3, &options);
    ferroflake_generator *plain = manual_generator(FERROFLAKE_PRESET_TWITTER, 14, &options);
    ferroflake_layout *layout = preset(FERROFLAKE_PRESET_SHARDED);
    ferroflake_parts parts;
    uint64_t id = 0;
    EXPECT(ferroflake_generator_next_id_for_shard(g, 15, &id), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_layout_decode(layout, id, &parts), FERROFLAKE_RESULT_OK);
    assert(parts.shard == 15 && parts.node == 3 && (id & 15) == 15);
    id = 5;
    EXPECT(ferroflake_generator_next_id_for_shard(g, 16, &id), FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE);
    EXPECT(ferroflake_generator_next_id_for_shard(plain, 1, &id), FERROFLAKE_RESULT_SHARD_OUT_OF_RANGE);
    assert(id == 5);
    ferroflake_layout_free(layout);
    ferroflake_generator_free(plain);
    ferroflake_generator_free(g);
}

static void batches_fill_the_buffer_only_on_success(void) {
    enum { N = 10000 };
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *g = manual_generator(FERROFLAKE_PRESET_TWITTER, 13, &options);
    uint64_t *ids = malloc(N * sizeof *ids);
    uint64_t copy[4];
    size_t i;
    assert(ids != NULL);
    EXPECT(ferroflake_generator_next_ids(g, ids, N), FERROFLAKE_RESULT_OK);
    for (i = 1; i < N; i++) {
        assert(ids[i] > ids[i - 1]);
    }
    EXPECT(ferroflake_generator_next_ids(g, ids, 0), FERROFLAKE_RESULT_OK);
    memcpy(copy, ids, sizeof copy);
    EXPECT(ferroflake_generator_next_ids(g, ids, SIZE_MAX), FERROFLAKE_RESULT_BUFFER_TOO_LARGE);
    EXPECT(ferroflake_generator_rewind_clock_ms(g, 60000), FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_ids(g, ids, 4), FERROFLAKE_RESULT_CLOCK_MOVED_BACKWARDS);
    assert(memcmp(copy, ids, sizeof copy) == 0);
    free(ids);
    ferroflake_generator_free(g);
}

static void strings_encode_into_caller_buffers(void) {
    const uint64_t id = UINT64_C(1541815603606036480);
    char buf[FERROFLAKE_ENCODED_MAX_SIZE];
    char small[11];
    size_t size = 0, len = 0;
    uint64_t parsed = 0;

    EXPECT(ferroflake_format_encoded_size(FERROFLAKE_FORMAT_BASE62, id, &size), FERROFLAKE_RESULT_OK);
    assert(size == 12);
    memset(small, 'x', sizeof small);
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_BASE62, id, small, sizeof small, &len),
           FERROFLAKE_RESULT_BUFFER_TOO_SMALL);
    assert(len == 0 && small[0] == 'x' && small[10] == 'x');
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_BASE62, id, buf, 12, &len), FERROFLAKE_RESULT_OK);
    assert(len == 11 && strlen(buf) == 11);
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_DECIMAL, id, buf, sizeof buf, NULL),
           FERROFLAKE_RESULT_OK);
    assert(strcmp(buf, "1541815603606036480") == 0);
    EXPECT(ferroflake_format_encoded_size(FERROFLAKE_FORMAT_DECIMAL, UINT64_C(9223372036854775807),
                                          &size),
           FERROFLAKE_RESULT_OK);
    assert(size == 20 && size <= FERROFLAKE_ENCODED_MAX_SIZE);
    /* Encode takes what parse gives: 2^63 and above are no ids, refused like their strings. */
    size = len = 3;
    memset(buf, 'x', sizeof buf);
    EXPECT(ferroflake_format_encoded_size(FERROFLAKE_FORMAT_DECIMAL, UINT64_C(1) << 63, &size),
           FERROFLAKE_RESULT_PARSE_OVERFLOW);
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_BASE62, UINT64_MAX, buf, sizeof buf, &len),
           FERROFLAKE_RESULT_PARSE_OVERFLOW);
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_BASE32, UINT64_C(1) << 63, buf, sizeof buf,
                                    &len),
           FERROFLAKE_RESULT_PARSE_OVERFLOW);
    assert(size == 3 && len == 3 && buf[0] == 'x' && buf[sizeof buf - 1] == 'x');
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_DECIMAL, 0, buf, 0, &len),
           FERROFLAKE_RESULT_BUFFER_TOO_SMALL);
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_DECIMAL, 0, NULL, 0, &len),
           FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_format_encode(FERROFLAKE_FORMAT_JSON + 1, id, buf, sizeof buf, &len),
           FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    EXPECT(ferroflake_format_encoded_size(FERROFLAKE_FORMAT_JSON + 1, id, &size),
           FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    EXPECT(ferroflake_format_encoded_size(FERROFLAKE_FORMAT_DECIMAL, id, NULL),
           FERROFLAKE_RESULT_NULL_ARGUMENT);

    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "1541815603606036480", 19, &parsed),
           FERROFLAKE_RESULT_OK);
    assert(parsed == id);
    /* The length is what counts, not a NUL: "42" out of "4299". */
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "4299", 2, &parsed), FERROFLAKE_RESULT_OK);
    assert(parsed == 42);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "", 0, &parsed), FERROFLAKE_RESULT_PARSE_EMPTY);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "-5", 2, &parsed), FERROFLAKE_RESULT_PARSE_NEGATIVE);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "4x", 2, &parsed),
           FERROFLAKE_RESULT_PARSE_INVALID_CHARACTER);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_BASE62, "abc", 3, &parsed),
           FERROFLAKE_RESULT_PARSE_WRONG_LENGTH);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "00000000000000000001", 20, &parsed),
           FERROFLAKE_RESULT_PARSE_TOO_LONG);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "9999999999999999999", 19, &parsed),
           FERROFLAKE_RESULT_PARSE_OVERFLOW);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "1\xe2\x82", 3, &parsed),
           FERROFLAKE_RESULT_INVALID_UTF8);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, NULL, 0, &parsed),
           FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_DECIMAL, "1", 1, NULL),
           FERROFLAKE_RESULT_NULL_ARGUMENT);
    EXPECT(ferroflake_format_parse(FERROFLAKE_FORMAT_JSON + 1, "1", 1, &parsed),
           FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    assert(parsed == 42);

    {
        ferroflake_format format = 99;
        EXPECT(ferroflake_format_from_name("base32", &format), FERROFLAKE_RESULT_OK);
        assert(format == FERROFLAKE_FORMAT_BASE32);
        EXPECT(ferroflake_format_from_name("hex", &format), FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
        EXPECT(ferroflake_format_from_name("dec\xff", &format), FERROFLAKE_RESULT_INVALID_UTF8);
        EXPECT(ferroflake_format_from_name(NULL, &format), FERROFLAKE_RESULT_NULL_ARGUMENT);
        EXPECT(ferroflake_format_from_name("dec", NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
        assert(format == FERROFLAKE_FORMAT_BASE32);
    }
}

static void real_clocks_issue_ids_near_now(void) {
    static const ferroflake_clock clocks[] = {FERROFLAKE_CLOCK_SYSTEM, FERROFLAKE_CLOCK_FAST};
    size_t i;
    for (i = 0; i < 2; i++) {
        ferroflake_generator_options options;
        ferroflake_generator *g;
        uint64_t a = 0, b = 0, now_ms = (uint64_t)time(NULL) * 1000, ts;
        CHECK_OK(FERROFLAKE_GENERATOR_OPTIONS_INIT(&options));
        options.clock = clocks[i];
        g = manual_generator(FERROFLAKE_PRESET_DISCORD, 9, &options);
        EXPECT(ferroflake_generator_next_id(g, &a), FERROFLAKE_RESULT_OK);
        EXPECT(ferroflake_generator_next_id(g, &b), FERROFLAKE_RESULT_OK);
        assert(b > a);
        ts = timestamp_of(g, b);
        assert(ts + 5000 > now_ms && ts < now_ms + 5000);
        ferroflake_generator_free(g);
    }
}

/* A generator inherited through fork() refuses in the child (parent and child would issue
 * the same ids); the parent goes on, and a generator made in the child issues. */
static void a_forked_child_cannot_issue_from_the_parents_generator(void) {
    ferroflake_generator_options options = manual_options(START_MS);
    ferroflake_generator *inherited = manual_generator(FERROFLAKE_PRESET_TWITTER, 15, &options);
    uint64_t before = 0, after = 0;
    int status = 0;
    pid_t child;
    CHECK_OK(ferroflake_generator_next_id(inherited, &before));
    fflush(NULL);
    child = fork();
    assert(child >= 0);
    if (child == 0) {
        uint64_t id = 0;
        ferroflake_generator *own = NULL;
        int ok = ferroflake_generator_next_id(inherited, &id) == FERROFLAKE_RESULT_GENERATOR_FORKED
                 && id == 0;
        /* The parent still holds node 15: the child may not make another of it, and is told
         * why. */
        ok = ok && new_generator(FERROFLAKE_PRESET_TWITTER, 15, &options, &own)
                       == FERROFLAKE_RESULT_NODE_IN_USE
             && own == NULL && strstr(ferroflake_last_error_message(), "parent process") != NULL;
        own = manual_generator(FERROFLAKE_PRESET_TWITTER, 16, &options);
        ok = ok && ferroflake_generator_next_id(own, &id) == FERROFLAKE_RESULT_OK;
        ferroflake_generator_free(own);
        ferroflake_generator_free(inherited);
        _exit(ok ? 0 : 1);
    }
    assert(waitpid(child, &status, 0) == child);
    assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    seen[FERROFLAKE_RESULT_GENERATOR_FORKED] = 1; /* checked in the child */
    CHECK_OK(ferroflake_generator_next_id(inherited, &after));
    assert(after > before);
    ferroflake_generator_free(inherited);
}

static volatile int churning = 1;

/* Makes and frees generators of node 30 until told to stop: the node-id table's lock is
 * taken and given back all the time. */
static void *churn(void *unused) {
    (void)unused;
    while (churning) {
        ferroflake_generator *g = NULL;
        if (new_generator(FERROFLAKE_PRESET_TWITTER, 30, NULL, &g) == FERROFLAKE_RESULT_OK) {
            ferroflake_generator_free(g);
        }
    }
    return NULL;
}

/* A fork while another thread holds the node-id table's lock must not leave the child's
 * table locked: each child makes a generator at once, and alarm() bounds a hang. */
static void a_fork_during_generator_churn_leaves_the_child_free_to_make_generators(void) {
    enum { FORKS = 20 };
    pthread_t thread;
    int i, status = 0;
    assert(pthread_create(&thread, NULL, churn, NULL) == 0);
    for (i = 0; i < FORKS; i++) {
        pid_t child = fork();
        assert(child >= 0);
        if (child == 0) {
            ferroflake_generator *own = NULL;
            int made;
            alarm(10);
            made = new_generator(FERROFLAKE_PRESET_TWITTER, 31, NULL, &own) == FERROFLAKE_RESULT_OK;
            ferroflake_generator_free(own);
            _exit(made ? 0 : 1);
        }
        assert(waitpid(child, &status, 0) == child);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "fork %d: the child could not make a generator (status %d)\n", i,
                    status);
        }
        assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    churning = 0;
    assert(pthread_join(thread, NULL) == 0);
}

/* An options struct as a program built against an older header has it: the first fields
 * only. The library reads just those bytes; the rest take their defaults. */
struct older_generator_options {
    uint32_t struct_size;
    ferroflake_clock clock;
    uint64_t manual_start_ms;
};

static void option_structs_can_grow(void) {
    ferroflake_layout *twitter = preset(FERROFLAKE_PRESET_TWITTER);
    ferroflake_generator *g = NULL;
    ferroflake_generator_options options;
    unsigned char buffer[sizeof(ferroflake_generator_options) + 16];
    struct older_generator_options older;
    size_t i;
    uint64_t id = 0, fence = 0;

    /* _init writes no more than the size it is given. */
    memset(buffer, 0xAA, sizeof buffer);
    EXPECT(ferroflake_generator_options_init(sizeof older,
                                             (ferroflake_generator_options *)(void *)buffer),
           FERROFLAKE_RESULT_OK);
    for (i = sizeof older; i < sizeof buffer; i++) assert(buffer[i] == 0xAA);
    memcpy(&older, buffer, sizeof older);
    assert(older.struct_size == sizeof older && older.clock == FERROFLAKE_CLOCK_SYSTEM);

    /* An older caller: a manual clock at START_MS, and the defaults past its struct
     * (no resume point, 5 ms backward wait). */
    older.clock = FERROFLAKE_CLOCK_MANUAL;
    older.manual_start_ms = START_MS;
    EXPECT(ferroflake_generator_new(twitter, 17, (const ferroflake_generator_options *)(void *)&older,
                                    &g),
           FERROFLAKE_RESULT_OK);
    EXPECT(ferroflake_generator_next_id(g, &id), FERROFLAKE_RESULT_OK);
    assert(timestamp_of(g, id) == START_MS);
    EXPECT(ferroflake_generator_fence_ms(g, &fence), FERROFLAKE_RESULT_OK);
    assert(fence == FERROFLAKE_NO_FENCE);
    ferroflake_generator_free(g);
    g = NULL;

    /* Sizes that are no version of the struct: refused, nothing made or written. */
    {
        static const uint32_t bad[] = {0, 3, 6, 12, sizeof(ferroflake_generator_options) + 8};
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            EXPECT(FERROFLAKE_GENERATOR_OPTIONS_INIT(&options), FERROFLAKE_RESULT_OK);
            options.struct_size = bad[i];
            EXPECT(ferroflake_generator_new(twitter, 3, &options, &g),
                   FERROFLAKE_RESULT_STRUCT_SIZE);
            assert(g == NULL);
            memset(&options, 0x55, sizeof options);
            EXPECT(ferroflake_generator_options_init(bad[i], &options),
                   FERROFLAKE_RESULT_STRUCT_SIZE);
            assert(options.struct_size == 0x55555555u);
        }
    }
    ferroflake_layout_free(twitter);
}

/* A node id has one live generator per process, whatever the layout or clock; once it is
 * freed, the next one continues after its ids, or is refused if its clock is behind them. */
static void a_node_id_has_one_live_generator_per_process(void) {
    ferroflake_generator_options manual = manual_options(START_MS);
    ferroflake_generator_options behind = manual_options(START_MS - 60000);
    ferroflake_generator *first = manual_generator(FERROFLAKE_PRESET_TWITTER, 20, &manual);
    ferroflake_generator *second = NULL;
    uint64_t last = 0, id = 0;

    EXPECT(ferroflake_generator_next_id(first, &last), FERROFLAKE_RESULT_OK);
    EXPECT(new_generator(FERROFLAKE_PRESET_JS53, 20, NULL, &second), FERROFLAKE_RESULT_NODE_IN_USE);
    assert(second == NULL);
    assert(strstr(ferroflake_last_error_message(), "node id 20 already has a live generator"));
    EXPECT(new_generator(FERROFLAKE_PRESET_TWITTER, 20, &manual, &second),
           FERROFLAKE_RESULT_NODE_IN_USE);
    /* Another node id is free, and the first generator still issues. */
    second = manual_generator(FERROFLAKE_PRESET_TWITTER, 21, &manual);
    ferroflake_generator_free(second);
    second = NULL;
    EXPECT(ferroflake_generator_next_id(first, &last), FERROFLAKE_RESULT_OK);
    ferroflake_generator_free(first);

    EXPECT(new_generator(FERROFLAKE_PRESET_TWITTER, 20, &behind, &second),
           FERROFLAKE_RESULT_NODE_IN_USE);
    assert(second == NULL);
    assert(strstr(ferroflake_last_error_message(), "could repeat them"));
    second = manual_generator(FERROFLAKE_PRESET_TWITTER, 20, &manual);
    EXPECT(ferroflake_generator_next_id(second, &id), FERROFLAKE_RESULT_OK);
    assert(id > last && timestamp_of(second, id) > START_MS);
    ferroflake_generator_free(second);
}

/* The last error's text is the core's own Display text, with the details. */
static void the_last_error_is_the_cores_text(void) {
    ferroflake_layout *twitter = preset(FERROFLAKE_PRESET_TWITTER);
    ferroflake_generator *g = NULL;
    EXPECT(ferroflake_generator_new(twitter, 1024, NULL, &g), FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
    assert(strcmp(ferroflake_last_error_message(), "node id 1024 is out of range 0..=1023") == 0);
    assert(ferroflake_last_error_code() == FERROFLAKE_RESULT_NODE_OUT_OF_RANGE);
    /* A success leaves it; a refusal without an error behind it gives the code's text. */
    EXPECT(ferroflake_generator_new(twitter, 1, NULL, &g), FERROFLAKE_RESULT_OK);
    assert(strcmp(ferroflake_last_error_message(), "node id 1024 is out of range 0..=1023") == 0);
    EXPECT(ferroflake_generator_next_id(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(strcmp(ferroflake_last_error_message(),
                  ferroflake_result_message(FERROFLAKE_RESULT_NULL_ARGUMENT)) == 0);
    ferroflake_generator_free(g);
    ferroflake_layout_free(twitter);
}

int main(void) {
    size_t i, reached = 0;
    messages_exist_for_every_code_and_unknown_numbers();
    version_matches_the_header();
    layouts_are_validated();
    compose_and_decode_refuse_what_does_not_fit();
    generators_refuse_bad_settings();
    a_node_id_has_one_live_generator_per_process();
    a_fork_during_generator_churn_leaves_the_child_free_to_make_generators();
    null_generators_are_refused_everywhere();
    ids_increase_and_decode_to_the_clock_and_node();
    a_used_up_sequence_waits_for_the_next_tick();
    a_clock_rollback_is_refused_then_recovered();
    drift_rides_out_small_rollbacks_and_borrows_ticks();
    resume_after_skips_the_previous_holders_ticks();
    resume_after_id_starts_above_an_old_generators_id();
    extreme_waits_and_ticks_give_ids_or_typed_errors();
    unreachable_resume_points_are_refused_up_front();
    a_fence_stops_issuing_until_cleared();
    shards_land_in_the_low_bits();
    batches_fill_the_buffer_only_on_success();
    strings_encode_into_caller_buffers();
    real_clocks_issue_ids_near_now();
    a_forked_child_cannot_issue_from_the_parents_generator();
    option_structs_can_grow();
    the_last_error_is_the_cores_text();

    for (i = 0; i < CODE_COUNT; i++) {
        ferroflake_result code = all_codes[i];
        if (unreachable_from_c(code)) {
            assert(!seen[code]);
            continue;
        }
        if (produced_elsewhere(code)) continue;
        if (!seen[code]) {
            fprintf(stderr, "result code %u (%s) was never produced\n", (unsigned)code,
                    ferroflake_result_message(code));
        }
        assert(seen[code]);
        reached++;
    }
    printf("api: %zu of %zu result codes produced here (lease.c and segment.c produce theirs; "
           "PANIC, UNMAPPED_ERROR and the mask's are checked by the Rust unit tests)\n",
           reached, (size_t)CODE_COUNT);
    return 0;
}
