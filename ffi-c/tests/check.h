/* Assertions for the C tests: like assert(), but a failing call prints its result code and
 * message first. The tests must never be built with NDEBUG. */
#ifndef FERROFLAKE_TEST_CHECK_H
#define FERROFLAKE_TEST_CHECK_H

#undef NDEBUG
#include <assert.h>
#include <stdio.h>

#include "ferroflake.h"

static inline ferroflake_result check_report(ferroflake_result got, ferroflake_result want,
                                             const char *call, const char *file, int line) {
    if (got != want) {
        fprintf(stderr, "%s:%d: %s\n  returned %u (%s)\n  expected %u (%s)\n", file, line, call,
                (unsigned)got, ferroflake_result_message(got), (unsigned)want,
                ferroflake_result_message(want));
    }
    return got;
}

/* The call must return exactly `want`. */
#define CHECK_CODE(call, want)                                                   \
    assert(check_report((call), (want), #call, __FILE__, __LINE__) == (want))

/* The call must succeed. */
#define CHECK_OK(call) CHECK_CODE(call, FERROFLAKE_RESULT_OK)

#endif
