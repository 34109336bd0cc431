/* One client process of cli/tests/remote_processes.rs: COUNT IDs from a segment key, or
 * under a leased node id, taken through ADDRESS (a ferroflake service's), one per line on
 * stdout. Lines are flushed one by one, so a reader that stops reading stops the issuing.
 * Exits 1 with the library's message at the first error, 0 after the last ID once the
 * segment is given back or the lease released.
 *
 *   remote_client segment ADDRESS KEY COUNT
 *   remote_client leased ADDRESS COUNT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferroflake.h"

static int fail(const char *what) {
    fprintf(stderr, "remote_client: %s: %s\n", what, ferroflake_last_error_message());
    return 1;
}

static int segment(const char *address, const char *name, unsigned long long count) {
    ferroflake_segment_allocator *allocator = NULL;
    ferroflake_segment_key *key = NULL;
    unsigned long long i;
    uint64_t id = 0;
    int status = 0;
    if (ferroflake_segment_allocator_new(address, NULL, &allocator) != FERROFLAKE_RESULT_OK) {
        return fail("open the store");
    }
    if (ferroflake_segment_allocator_key(allocator, name, &key) != FERROFLAKE_RESULT_OK) {
        status = fail("open the key");
    }
    for (i = 0; status == 0 && i < count; i++) {
        if (ferroflake_segment_key_next_id(key, &id) != FERROFLAKE_RESULT_OK) {
            status = fail("next id");
        } else if (printf("%llu\n", (unsigned long long)id) < 0) {
            status = 1;
        }
    }
    ferroflake_segment_key_free(key);
    ferroflake_segment_allocator_free(allocator); /* gives the unissued rest back */
    return status;
}

static int leased(const char *address, unsigned long long count) {
    ferroflake_layout *layout = NULL;
    ferroflake_leased_generator *generator = NULL;
    unsigned long long i;
    uint64_t id = 0;
    int status = 0;
    if (ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, &layout) != FERROFLAKE_RESULT_OK) {
        return fail("layout");
    }
    if (ferroflake_leased_generator_new(layout, address, NULL, &generator) != FERROFLAKE_RESULT_OK) {
        ferroflake_layout_free(layout);
        return fail("lease a node id");
    }
    for (i = 0; status == 0 && i < count; i++) {
        if (ferroflake_leased_generator_next_id(generator, &id) != FERROFLAKE_RESULT_OK) {
            status = fail("next id");
        } else if (printf("%llu\n", (unsigned long long)id) < 0) {
            status = 1;
        }
    }
    if (ferroflake_leased_generator_release(generator) != FERROFLAKE_RESULT_OK && status == 0) {
        status = fail("release");
    }
    ferroflake_layout_free(layout);
    return status;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 5 && strcmp(argv[1], "segment") == 0) {
        return segment(argv[2], argv[3], strtoull(argv[4], NULL, 10));
    }
    if (argc == 4 && strcmp(argv[1], "leased") == 0) {
        return leased(argv[2], strtoull(argv[3], NULL, 10));
    }
    fprintf(stderr, "usage: remote_client segment ADDRESS KEY COUNT | leased ADDRESS COUNT\n");
    return 2;
}
