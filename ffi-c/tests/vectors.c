/* Every case of testdata/vectors.json, through the C API: presets, ids <-> parts and strings,
 * layouts by name or spelling, and each refusal with its result code. The cases come from vectors_cases.h, which
 * vectors_to_c.py generates from the JSON at test time. */
#include <stdint.h>
#include <string.h>

#include "check.h"

/* The formats of vectors.json; its generated header checks the number. */
#define FORMAT_COUNT 9

struct preset_case {
    const char *name;
    ferroflake_layout_spec spec;
    uint32_t total_bits;
    uint64_t capacity_per_second;
    uint64_t exhausts_at_ms;
};

struct id_case {
    const char *name;
    const char *preset; /* "" when the case uses a custom layout */
    ferroflake_layout_spec spec;
    ferroflake_parts parts;
    ferroflake_parts decoded;
    uint64_t id;
    const char *texts[FORMAT_COUNT]; /* in the order of format_names */
};

struct layout_error_case {
    ferroflake_layout_spec spec;
    ferroflake_result error;
};

struct generator_error_case {
    ferroflake_layout_spec spec;
    uint64_t node;
    uint64_t now_ms;
    uint32_t has_resume_after;
    uint64_t resume_after_ms;
    ferroflake_result error;
};

struct compose_error_case {
    ferroflake_layout_spec spec;
    ferroflake_parts parts;
    ferroflake_result error;
};

struct decode_error_case {
    ferroflake_layout_spec spec;
    uint64_t id;
    ferroflake_result error;
};

struct parse_error_case {
    const char *format; /* a name for ferroflake_format_from_name */
    const char *input;
    size_t len;
    ferroflake_result error;
};

struct parse_ok_case {
    const char *format;
    const char *input;
    size_t len;
    uint64_t id;
};

struct encode_error_case {
    const char *format;
    uint64_t id;
    ferroflake_result error;
};

struct layout_spelling_case {
    const char *name;
    const char *spelling; /* a preset name or a layout spelling */
    ferroflake_layout_spec spec;
    ferroflake_parts parts;
    ferroflake_parts decoded;
    uint64_t id;
};

struct layout_spelling_error_case {
    const char *spelling;
    ferroflake_result error;
};

#include "vectors_cases.h"

static size_t cases_run = 0;

static ferroflake_layout *layout_from(const ferroflake_layout_spec *spec) {
    ferroflake_layout *layout = NULL;
    CHECK_OK(ferroflake_layout_new(spec, &layout));
    assert(layout != NULL);
    return layout;
}

static int same_spec(const ferroflake_layout_spec *a, const ferroflake_layout_spec *b) {
    return a->time_bits == b->time_bits && a->node_bits == b->node_bits &&
           a->sequence_bits == b->sequence_bits && a->shard_bits == b->shard_bits &&
           a->tick_ms == b->tick_ms && a->epoch_ms == b->epoch_ms && a->order == b->order;
}

static int same_parts(const ferroflake_parts *a, const ferroflake_parts *b) {
    return a->timestamp_ms == b->timestamp_ms && a->node == b->node &&
           a->sequence == b->sequence && a->shard == b->shard;
}

static void presets_match_their_definitions(void) {
    size_t i;
    for (i = 0; i < preset_cases_count; i++) {
        const struct preset_case *c = &preset_cases[i];
        ferroflake_layout *by_name = NULL, *by_enum = NULL;
        ferroflake_layout_spec spec;
        ferroflake_layout_limits limits;
        uint64_t value;
        uint32_t preset;
        int found = 0;

        CHECK_OK(ferroflake_layout_new_named(c->name, &by_name));
        CHECK_OK(ferroflake_layout_get_spec(by_name, &spec));
        assert(same_spec(&spec, &c->spec));
        CHECK_OK(ferroflake_layout_get_limits(by_name, &limits));
        assert(limits.total_bits == c->total_bits);
        assert(limits.capacity_per_second == c->capacity_per_second);
        assert(limits.exhausts_at_ms == c->exhausts_at_ms);
        CHECK_OK(ferroflake_layout_capacity_per_second(by_name, &value));
        assert(value == c->capacity_per_second);
        CHECK_OK(ferroflake_layout_exhausts_at_ms(by_name, &value));
        assert(value == c->exhausts_at_ms);

        /* Exactly one preset enum value gives the same layout. */
        for (preset = FERROFLAKE_PRESET_TWITTER; preset <= FERROFLAKE_PRESET_SHARDED; preset++) {
            ferroflake_layout_spec other;
            CHECK_OK(ferroflake_layout_new_preset(preset, &by_enum));
            CHECK_OK(ferroflake_layout_get_spec(by_enum, &other));
            ferroflake_layout_free(by_enum);
            by_enum = NULL;
            if (same_spec(&other, &c->spec)) {
                found++;
            }
        }
        assert(found == 1);
        ferroflake_layout_free(by_name);
        cases_run++;
    }
}

static ferroflake_format format_named(const char *name) {
    ferroflake_format format = 0;
    CHECK_OK(ferroflake_format_from_name(name, &format));
    return format;
}

static void check_string(ferroflake_format format, uint64_t id, const char *want) {
    char buf[FERROFLAKE_ENCODED_MAX_SIZE];
    size_t len = 0, size = 0;
    uint64_t parsed = 0;
    CHECK_OK(ferroflake_format_encoded_size(format, id, &size));
    assert(size == strlen(want) + 1);
    CHECK_OK(ferroflake_format_encode(format, id, buf, sizeof buf, &len));
    assert(len == strlen(want));
    assert(strcmp(buf, want) == 0);
    CHECK_OK(ferroflake_format_parse(format, want, strlen(want), &parsed));
    assert(parsed == id);
}

static void ids_compose_decode_and_encode_as_recorded(void) {
    size_t i, f;
    for (i = 0; i < id_cases_count; i++) {
        const struct id_case *c = &id_cases[i];
        ferroflake_layout *layout = layout_from(&c->spec);
        ferroflake_parts decoded;
        uint64_t id = 0;

        if (c->preset[0] != '\0') {
            ferroflake_layout *preset = NULL;
            ferroflake_layout_spec spec;
            CHECK_OK(ferroflake_layout_new_named(c->preset, &preset));
            CHECK_OK(ferroflake_layout_get_spec(preset, &spec));
            assert(same_spec(&spec, &c->spec));
            ferroflake_layout_free(preset);
        }
        CHECK_OK(ferroflake_layout_compose(layout, &c->parts, &id));
        if (id != c->id) {
            fprintf(stderr, "%s: composed %llu\n", c->name, (unsigned long long)id);
        }
        assert(id == c->id);
        CHECK_OK(ferroflake_layout_decode(layout, c->id, &decoded));
        assert(same_parts(&decoded, &c->decoded));
        for (f = 0; f < FORMAT_COUNT; f++) {
            check_string(format_named(format_names[f]), c->id, c->texts[f]);
        }
        ferroflake_layout_free(layout);
        cases_run++;
    }
}

static void bad_layouts_are_refused_with_their_code(void) {
    size_t i;
    for (i = 0; i < layout_error_cases_count; i++) {
        static char sentinel;
        ferroflake_layout *const before = (ferroflake_layout *)(void *)&sentinel;
        ferroflake_layout *layout = before; /* must stay untouched */
        CHECK_CODE(ferroflake_layout_new(&layout_error_cases[i].spec, &layout),
                   layout_error_cases[i].error);
        assert(layout == before);
        cases_run++;
    }
}

static void bad_generators_are_refused_with_their_code(void) {
    size_t i;
    for (i = 0; i < generator_error_cases_count; i++) {
        const struct generator_error_case *c = &generator_error_cases[i];
        ferroflake_layout *layout = layout_from(&c->spec);
        ferroflake_generator *generator = NULL;
        ferroflake_generator_options options;
        CHECK_OK(FERROFLAKE_GENERATOR_OPTIONS_INIT(&options));
        options.clock = FERROFLAKE_CLOCK_MANUAL;
        options.manual_start_ms = c->now_ms;
        options.has_resume_after = c->has_resume_after;
        options.resume_after_ms = c->resume_after_ms;
        CHECK_CODE(ferroflake_generator_new(layout, c->node, &options, &generator), c->error);
        assert(generator == NULL);
        ferroflake_layout_free(layout);
        cases_run++;
    }
}

static void bad_parts_and_ids_are_refused_with_their_code(void) {
    size_t i;
    for (i = 0; i < compose_error_cases_count; i++) {
        const struct compose_error_case *c = &compose_error_cases[i];
        ferroflake_layout *layout = layout_from(&c->spec);
        uint64_t id = 12345;
        CHECK_CODE(ferroflake_layout_compose(layout, &c->parts, &id), c->error);
        assert(id == 12345);
        ferroflake_layout_free(layout);
        cases_run++;
    }
    for (i = 0; i < decode_error_cases_count; i++) {
        const struct decode_error_case *c = &decode_error_cases[i];
        ferroflake_layout *layout = layout_from(&c->spec);
        ferroflake_parts parts = {1, 2, 3, 4};
        CHECK_CODE(ferroflake_layout_decode(layout, c->id, &parts), c->error);
        assert(parts.timestamp_ms == 1 && parts.node == 2 && parts.sequence == 3 &&
               parts.shard == 4);
        ferroflake_layout_free(layout);
        cases_run++;
    }
}

static void strings_parse_or_fail_as_recorded(void) {
    size_t i;
    for (i = 0; i < parse_error_cases_count; i++) {
        const struct parse_error_case *c = &parse_error_cases[i];
        uint64_t id = 777;
        CHECK_CODE(ferroflake_format_parse(format_named(c->format), c->input, c->len, &id),
                   c->error);
        assert(id == 777);
        cases_run++;
    }
    for (i = 0; i < parse_ok_cases_count; i++) {
        const struct parse_ok_case *c = &parse_ok_cases[i];
        uint64_t id = 0;
        CHECK_OK(ferroflake_format_parse(format_named(c->format), c->input, c->len, &id));
        assert(id == c->id);
        cases_run++;
    }
}

/* encode takes what parse gives: a value parse refuses is refused with the same code. */
static void values_parse_refuses_are_refused_by_encode_too(void) {
    size_t i;
    for (i = 0; i < encode_error_cases_count; i++) {
        const struct encode_error_case *c = &encode_error_cases[i];
        char buf[FERROFLAKE_ENCODED_MAX_SIZE];
        size_t size = 5, len = 6;
        memset(buf, 'x', sizeof buf);
        CHECK_CODE(ferroflake_format_encoded_size(format_named(c->format), c->id, &size),
                   c->error);
        CHECK_CODE(ferroflake_format_encode(format_named(c->format), c->id, buf, sizeof buf, &len),
                   c->error);
        assert(size == 5 && len == 6 && buf[0] == 'x');
        cases_run++;
    }
}

static void layout_spellings_read_and_decode_as_recorded(void) {
    size_t i;
    for (i = 0; i < layout_spelling_cases_count; i++) {
        const struct layout_spelling_case *c = &layout_spelling_cases[i];
        ferroflake_layout *layout = NULL;
        ferroflake_layout_spec spec;
        ferroflake_parts decoded;
        uint64_t id = 0;

        CHECK_OK(ferroflake_layout_new_named(c->spelling, &layout));
        CHECK_OK(ferroflake_layout_get_spec(layout, &spec));
        if (!same_spec(&spec, &c->spec)) {
            fprintf(stderr, "%s: %s read as another layout\n", c->name, c->spelling);
        }
        assert(same_spec(&spec, &c->spec));
        CHECK_OK(ferroflake_layout_compose(layout, &c->parts, &id));
        assert(id == c->id);
        CHECK_OK(ferroflake_layout_decode(layout, c->id, &decoded));
        assert(same_parts(&decoded, &c->decoded));
        ferroflake_layout_free(layout);
        cases_run++;
    }
    for (i = 0; i < layout_spelling_error_cases_count; i++) {
        const struct layout_spelling_error_case *c = &layout_spelling_error_cases[i];
        ferroflake_layout *layout = NULL;
        CHECK_CODE(ferroflake_layout_new_named(c->spelling, &layout), c->error);
        assert(layout == NULL);
        cases_run++;
    }
}

int main(void) {
    size_t expected = preset_cases_count + id_cases_count + layout_error_cases_count +
                      generator_error_cases_count + compose_error_cases_count +
                      decode_error_cases_count + parse_error_cases_count + parse_ok_cases_count +
                      encode_error_cases_count + layout_spelling_cases_count +
                      layout_spelling_error_cases_count;
    presets_match_their_definitions();
    ids_compose_decode_and_encode_as_recorded();
    bad_layouts_are_refused_with_their_code();
    bad_generators_are_refused_with_their_code();
    bad_parts_and_ids_are_refused_with_their_code();
    strings_parse_or_fail_as_recorded();
    values_parse_refuses_are_refused_by_encode_too();
    layout_spellings_read_and_decode_as_recorded();
    assert(cases_run == expected);
    printf("vectors: %zu cases passed\n", cases_run);
    return 0;
}
