/* The keyed ID mask from C: every mask case of testdata/vectors.json (numbers and every
 * text form, refusals of texts and keys, spellings of one key), round trips at every
 * width, key rotation, a wrong key, refusals of bad arguments with untouched
 * out-parameters, short buffers, and one keyring shared by threads. The cases come from
 * vectors_mask_cases.h, which vectors_to_c.py generates from the JSON at test time. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

/* The formats of vectors.json; its generated header checks the number. */
#define FORMAT_COUNT 9

struct mask_case {
    const char *key;
    size_t key_len;
    uint32_t bits;
    uint64_t id;
    uint64_t masked;
    const char *texts[FORMAT_COUNT]; /* in the order of format_names */
};

struct mask_decode_error_case {
    const char *keyring; /* the keyring's lines, joined by '\n' */
    size_t keyring_len;
    uint32_t bits;
    const char *format;
    const char *input;
    size_t len;
    ferroflake_result error;
};

struct mask_key_error_case {
    const char *input;
    size_t len;
    ferroflake_result error;
};

struct mask_key_spelling {
    const char *key;
    size_t len;
};

#include "vectors_mask_cases.h"

#define KEY1 "1:000102030405060708090a0b0c0d0e0f"
#define KEY2 "2:f0e1d2c3b4a5968778695a4b3c2d1e0f"
#define SENTINEL UINT64_C(0x5a5a5a5a5a5a5a5a)

static size_t cases_run = 0;

static ferroflake_mask_keyring *keyring_of(const char *text, size_t len) {
    ferroflake_mask_keyring *keyring = NULL;
    CHECK_OK(ferroflake_mask_keyring_new(text, len, &keyring));
    assert(keyring != NULL);
    return keyring;
}

static ferroflake_format format_named(const char *name) {
    ferroflake_format format = 99;
    CHECK_OK(ferroflake_format_from_name(name, &format));
    return format;
}

/* Encodes `id` and expects `want`; decodes `want` back to `id`. */
static void check_text(const ferroflake_mask_keyring *keyring, uint32_t bits,
                       ferroflake_format format, uint64_t id, const char *want) {
    char buf[FERROFLAKE_MASK_TEXT_MAX_SIZE];
    size_t size = 0, len = 0;
    uint64_t back = SENTINEL;
    CHECK_OK(ferroflake_mask_text_size(bits, format, &size));
    assert(size == strlen(want) + 1 && size <= sizeof buf);
    CHECK_OK(ferroflake_mask_keyring_encode(keyring, bits, format, id, buf, size, &len));
    if (strcmp(buf, want) != 0) {
        fprintf(stderr, "bits %u format %u id %llu: got %s, want %s\n", (unsigned)bits,
                (unsigned)format, (unsigned long long)id, buf, want);
    }
    assert(strcmp(buf, want) == 0 && len == strlen(want));
    CHECK_OK(ferroflake_mask_keyring_decode(keyring, bits, format, want, strlen(want), &back));
    assert(back == id);
}

static void every_vector_case_masks_and_encodes(void) {
    size_t i, f;
    for (i = 0; i < mask_cases_count; i++) {
        const struct mask_case *c = &mask_cases[i];
        ferroflake_mask_keyring *keyring = keyring_of(c->key, c->key_len);
        uint64_t masked = SENTINEL, back = SENTINEL;
        CHECK_OK(ferroflake_mask_keyring_mask(keyring, c->bits, c->id, &masked));
        assert(masked == c->masked);
        CHECK_OK(ferroflake_mask_keyring_unmask(keyring, c->bits, c->masked, &back));
        assert(back == c->id);
        for (f = 0; f < FORMAT_COUNT; f++) {
            check_text(keyring, c->bits, format_named(format_names[f]), c->id, c->texts[f]);
        }
        ferroflake_mask_keyring_free(keyring);
        cases_run++;
    }
}

static void every_vector_decode_error_is_refused(void) {
    size_t i;
    for (i = 0; i < mask_decode_error_cases_count; i++) {
        const struct mask_decode_error_case *c = &mask_decode_error_cases[i];
        ferroflake_mask_keyring *keyring = keyring_of(c->keyring, c->keyring_len);
        uint64_t id = SENTINEL;
        CHECK_CODE(ferroflake_mask_keyring_decode(keyring, c->bits, format_named(c->format),
                                                  c->input, c->len, &id),
                   c->error);
        assert(id == SENTINEL);
        ferroflake_mask_keyring_free(keyring);
        cases_run++;
    }
}

static void every_vector_key_error_is_refused(void) {
    size_t i;
    for (i = 0; i < mask_key_error_cases_count; i++) {
        const struct mask_key_error_case *c = &mask_key_error_cases[i];
        ferroflake_mask_keyring *keyring = NULL, *sentinel = (ferroflake_mask_keyring *)&keyring;
        keyring = sentinel;
        CHECK_CODE(ferroflake_mask_keyring_new(c->input, c->len, &keyring), c->error);
        assert(keyring == sentinel);
        /* The reason is told, the secret is not. */
        assert(strstr(ferroflake_last_error_message(), "0d0e0") == NULL);
        cases_run++;
    }
}

static void every_vector_spelling_is_the_same_key(void) {
    size_t i;
    ferroflake_mask_keyring *reference = keyring_of(mask_cases[0].key, mask_cases[0].key_len);
    for (i = 0; i < mask_key_spellings_count; i++) {
        ferroflake_mask_keyring *keyring =
            keyring_of(mask_key_spellings[i].key, mask_key_spellings[i].len);
        uint32_t version = 99, bits;
        CHECK_OK(ferroflake_mask_keyring_current_version(keyring, &version));
        assert(version == 1);
        for (bits = 8; bits <= 64; bits++) {
            uint64_t a = 1, b = 2;
            CHECK_OK(ferroflake_mask_keyring_mask(reference, bits, 123, &a));
            CHECK_OK(ferroflake_mask_keyring_mask(keyring, bits, 123, &b));
            assert(a == b);
        }
        ferroflake_mask_keyring_free(keyring);
        cases_run++;
    }
    ferroflake_mask_keyring_free(reference);
}

static void round_trips_at_every_width(void) {
    ferroflake_mask_keyring *keyring = keyring_of(KEY1, strlen(KEY1));
    uint32_t bits;
    for (bits = 8; bits <= 64; bits++) {
        const uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
        const uint64_t ids[] = {0, 1, 2, max / 3, max - 1, max};
        size_t i;
        for (i = 0; i < sizeof ids / sizeof ids[0]; i++) {
            uint64_t masked = SENTINEL, back = SENTINEL;
            char buf[FERROFLAKE_MASK_TEXT_MAX_SIZE];
            ferroflake_format format;
            CHECK_OK(ferroflake_mask_keyring_mask(keyring, bits, ids[i], &masked));
            assert(masked <= max);
            CHECK_OK(ferroflake_mask_keyring_unmask(keyring, bits, masked, &back));
            assert(back == ids[i]);
            for (format = FERROFLAKE_FORMAT_DECIMAL; format <= FERROFLAKE_FORMAT_JSON; format++) {
                size_t len = 0;
                back = SENTINEL;
                CHECK_OK(ferroflake_mask_keyring_encode(keyring, bits, format, ids[i], buf,
                                                        sizeof buf, &len));
                CHECK_OK(ferroflake_mask_keyring_decode(keyring, bits, format, buf, len, &back));
                assert(back == ids[i]);
            }
        }
        if (bits < 64) {
            uint64_t out = SENTINEL;
            CHECK_CODE(ferroflake_mask_keyring_mask(keyring, bits, max + 1, &out),
                       FERROFLAKE_RESULT_ID_OUT_OF_RANGE);
            CHECK_CODE(ferroflake_mask_keyring_unmask(keyring, bits, max + 1, &out),
                       FERROFLAKE_RESULT_ID_OUT_OF_RANGE);
            assert(out == SENTINEL);
        }
    }
    ferroflake_mask_keyring_free(keyring);
}

/* After a rotation the new key masks and the old texts still decode; a keyring without
 * the old key refuses them by version, and a different secret under the same version
 * decodes them to some other ID (the mask does not authenticate). */
static void rotation_and_wrong_keys(void) {
    static const char rotated[] = "# the current key first\n" KEY2 "\r\n\n  " KEY1 "  \n";
    static const char impostor[] = "1:f0e1d2c3b4a5968778695a4b3c2d1e0f";
    ferroflake_mask_keyring *old_ring = keyring_of(KEY1, strlen(KEY1));
    ferroflake_mask_keyring *ring = keyring_of(rotated, strlen(rotated));
    ferroflake_mask_keyring *new_only = keyring_of(KEY2, strlen(KEY2));
    ferroflake_mask_keyring *wrong = keyring_of(impostor, strlen(impostor));
    char old_text[FERROFLAKE_MASK_TEXT_MAX_SIZE], new_text[FERROFLAKE_MASK_TEXT_MAX_SIZE];
    size_t old_len = 0, new_len = 0;
    uint64_t id = SENTINEL, masked = 0;
    uint32_t version = 0;

    CHECK_OK(ferroflake_mask_keyring_current_version(ring, &version));
    assert(version == 2);
    CHECK_OK(ferroflake_mask_keyring_encode(old_ring, 63, FERROFLAKE_FORMAT_BASE62, 42, old_text,
                                            sizeof old_text, &old_len));
    CHECK_OK(ferroflake_mask_keyring_encode(ring, 63, FERROFLAKE_FORMAT_BASE62, 42, new_text,
                                            sizeof new_text, &new_len));
    assert(old_text[0] == '1' && new_text[0] == '2' && strcmp(old_text, new_text) != 0);
    CHECK_OK(ferroflake_mask_keyring_decode(ring, 63, FERROFLAKE_FORMAT_BASE62, old_text,
                                            old_len, &id));
    assert(id == 42);
    id = SENTINEL;
    CHECK_OK(ferroflake_mask_keyring_decode(ring, 63, FERROFLAKE_FORMAT_BASE62, new_text,
                                            new_len, &id));
    assert(id == 42);

    id = SENTINEL;
    CHECK_CODE(ferroflake_mask_keyring_decode(new_only, 63, FERROFLAKE_FORMAT_BASE62, old_text,
                                              old_len, &id),
               FERROFLAKE_RESULT_UNKNOWN_MASK_KEY_VERSION);
    CHECK_CODE(ferroflake_mask_keyring_decode(old_ring, 63, FERROFLAKE_FORMAT_BASE62, new_text,
                                              new_len, &id),
               FERROFLAKE_RESULT_UNKNOWN_MASK_KEY_VERSION);
    assert(id == SENTINEL);
    CHECK_OK(ferroflake_mask_keyring_decode(wrong, 63, FERROFLAKE_FORMAT_BASE62, old_text, old_len,
                                            &id));
    assert(id != 42);
    CHECK_OK(ferroflake_mask_keyring_mask(old_ring, 63, 42, &masked));
    CHECK_OK(ferroflake_mask_keyring_unmask(wrong, 63, masked, &id));
    assert(id != 42);
    /* The same key at another width is another permutation. */
    CHECK_OK(ferroflake_mask_keyring_unmask(old_ring, 64, masked, &id));
    assert(id != 42);

    ferroflake_mask_keyring_free(old_ring);
    ferroflake_mask_keyring_free(ring);
    ferroflake_mask_keyring_free(new_only);
    ferroflake_mask_keyring_free(wrong);
}

static void bad_arguments_are_refused_and_outputs_left_alone(void) {
    static const uint32_t bad_widths[] = {0, 1, 7, 65, 1000, UINT32_MAX};
    ferroflake_mask_keyring *keyring = keyring_of(KEY1, strlen(KEY1));
    ferroflake_mask_keyring *out_ring = NULL, *sentinel = (ferroflake_mask_keyring *)&out_ring;
    char buf[FERROFLAKE_MASK_TEXT_MAX_SIZE];
    const char text[] = "12qcoxPjS172";
    uint64_t value = SENTINEL;
    uint32_t version = 77;
    size_t i, size = 5, len = 6;

    out_ring = sentinel;
    CHECK_CODE(ferroflake_mask_keyring_new(NULL, 3, &out_ring), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_new(KEY1, strlen(KEY1), NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_new("1:\xff\xfe", 4, &out_ring),
               FERROFLAKE_RESULT_INVALID_UTF8);
    /* The length counts, not a NUL: a key cut short is refused. */
    CHECK_CODE(ferroflake_mask_keyring_new(KEY1, strlen(KEY1) - 1, &out_ring),
               FERROFLAKE_RESULT_PARSE_WRONG_LENGTH);
    assert(out_ring == sentinel);
    ferroflake_mask_keyring_free(NULL);

    CHECK_CODE(ferroflake_mask_keyring_current_version(NULL, &version),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_current_version(keyring, NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_mask(NULL, 63, 1, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_mask(keyring, 63, 1, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_unmask(NULL, 63, 1, &value),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_unmask(keyring, 63, 1, NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_encode(NULL, 63, FERROFLAKE_FORMAT_BASE62, 1, buf,
                                              sizeof buf, &len),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_encode(keyring, 63, FERROFLAKE_FORMAT_BASE62, 1, NULL,
                                              sizeof buf, &len),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_decode(NULL, 63, FERROFLAKE_FORMAT_BASE62, text,
                                              strlen(text), &value),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_decode(keyring, 63, FERROFLAKE_FORMAT_BASE62, NULL, 12,
                                              &value),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_keyring_decode(keyring, 63, FERROFLAKE_FORMAT_BASE62, text,
                                              strlen(text), NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_mask_text_size(63, FERROFLAKE_FORMAT_BASE62, NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);

    for (i = 0; i < sizeof bad_widths / sizeof bad_widths[0]; i++) {
        const uint32_t bits = bad_widths[i];
        CHECK_CODE(ferroflake_mask_keyring_mask(keyring, bits, 1, &value),
                   FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE);
        CHECK_CODE(ferroflake_mask_keyring_unmask(keyring, bits, 1, &value),
                   FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE);
        CHECK_CODE(ferroflake_mask_keyring_encode(keyring, bits, FERROFLAKE_FORMAT_BASE62, 1, buf,
                                                  sizeof buf, &len),
                   FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE);
        CHECK_CODE(ferroflake_mask_keyring_decode(keyring, bits, FERROFLAKE_FORMAT_BASE62, text,
                                                  strlen(text), &value),
                   FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE);
        CHECK_CODE(ferroflake_mask_text_size(bits, FERROFLAKE_FORMAT_BASE62, &size),
                   FERROFLAKE_RESULT_MASK_WIDTH_OUT_OF_RANGE);
        assert(strstr(ferroflake_last_error_message(), "8..=64") != NULL);
    }
    CHECK_CODE(ferroflake_mask_keyring_encode(keyring, 63, FERROFLAKE_FORMAT_JSON + 1, 1, buf,
                                              sizeof buf, &len),
               FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    CHECK_CODE(ferroflake_mask_keyring_decode(keyring, 63, FERROFLAKE_FORMAT_JSON + 1, text,
                                              strlen(text), &value),
               FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    CHECK_CODE(ferroflake_mask_text_size(63, FERROFLAKE_FORMAT_JSON + 1, &size),
               FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    CHECK_CODE(ferroflake_mask_keyring_decode(keyring, 63, FERROFLAKE_FORMAT_BASE62, "1\xff", 2,
                                              &value),
               FERROFLAKE_RESULT_INVALID_UTF8);
    assert(value == SENTINEL && version == 77 && size == 5 && len == 6);
    ferroflake_mask_keyring_free(keyring);
}

/* A buffer one byte short is refused and left as it was; the exact size works. */
static void short_buffers_are_refused_untouched(void) {
    ferroflake_mask_keyring *keyring = keyring_of(KEY1, strlen(KEY1));
    ferroflake_format format;
    for (format = FERROFLAKE_FORMAT_DECIMAL; format <= FERROFLAKE_FORMAT_JSON; format++) {
        char buf[FERROFLAKE_MASK_TEXT_MAX_SIZE];
        size_t size = 0, len = 99, i;
        CHECK_OK(ferroflake_mask_text_size(63, format, &size));
        memset(buf, 'x', sizeof buf);
        CHECK_CODE(ferroflake_mask_keyring_encode(keyring, 63, format, 7, buf, size - 1, &len),
                   FERROFLAKE_RESULT_BUFFER_TOO_SMALL);
        CHECK_CODE(ferroflake_mask_keyring_encode(keyring, 63, format, 7, buf, 0, &len),
                   FERROFLAKE_RESULT_BUFFER_TOO_SMALL);
        for (i = 0; i < sizeof buf; i++) {
            assert(buf[i] == 'x');
        }
        assert(len == 99);
        CHECK_OK(ferroflake_mask_keyring_encode(keyring, 63, format, 7, buf, size, NULL));
        assert(strlen(buf) == size - 1);
    }
    ferroflake_mask_keyring_free(keyring);
}

#define THREADS 4
#define PER_THREAD 2000

struct worker {
    const ferroflake_mask_keyring *keyring;
    uint64_t first;
    int ok;
};

static void *round_trip_many(void *arg) {
    struct worker *w = arg;
    uint64_t i;
    w->ok = 1;
    for (i = w->first; i < w->first + PER_THREAD; i++) {
        char buf[FERROFLAKE_MASK_TEXT_MAX_SIZE];
        size_t len = 0;
        uint64_t back = 0;
        if (ferroflake_mask_keyring_encode(w->keyring, 53, FERROFLAKE_FORMAT_BASE32, i, buf,
                                           sizeof buf, &len) != FERROFLAKE_RESULT_OK ||
            ferroflake_mask_keyring_decode(w->keyring, 53, FERROFLAKE_FORMAT_BASE32, buf, len,
                                           &back) != FERROFLAKE_RESULT_OK ||
            back != i) {
            w->ok = 0;
        }
    }
    return NULL;
}

/* One keyring, used by several threads at once (the header promises it may be). */
static void threads_share_one_keyring(void) {
    ferroflake_mask_keyring *keyring = keyring_of(KEY1, strlen(KEY1));
    pthread_t threads[THREADS];
    struct worker workers[THREADS];
    int t;
    for (t = 0; t < THREADS; t++) {
        workers[t].keyring = keyring;
        workers[t].first = (uint64_t)t * PER_THREAD;
        assert(pthread_create(&threads[t], NULL, round_trip_many, &workers[t]) == 0);
    }
    for (t = 0; t < THREADS; t++) {
        assert(pthread_join(threads[t], NULL) == 0);
        assert(workers[t].ok);
    }
    ferroflake_mask_keyring_free(keyring);
}

int main(void) {
    every_vector_case_masks_and_encodes();
    every_vector_decode_error_is_refused();
    every_vector_key_error_is_refused();
    every_vector_spelling_is_the_same_key();
    /* Every case of the JSON's mask section ran: none was skipped. */
    assert(cases_run == mask_cases_count + mask_decode_error_cases_count +
                            mask_key_error_cases_count + mask_key_spellings_count);
    assert(mask_cases_count > 0 && mask_decode_error_cases_count > 0 &&
           mask_key_error_cases_count > 0 && mask_key_spellings_count > 0);
    round_trips_at_every_width();
    rotation_and_wrong_keys();
    bad_arguments_are_refused_and_outputs_left_alone();
    short_buffers_are_refused_untouched();
    threads_share_one_keyring();
    printf("mask: %zu vector cases ok\n", cases_run);
    return 0;
}
