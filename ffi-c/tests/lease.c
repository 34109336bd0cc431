/* Leased generators from C: refusals of bad input with untouched out-parameters, fork()
 * (the child is refused and releases nothing), a holder killed and resumed from its state
 * file, four processes on one embedded registry (distinct node ids, no duplicate), and a
 * holder stopped with SIGSTOP past its TTL, which is fenced when it resumes while the
 * process that took its node id issues on, with no duplicate between them. One leased
 * generator is also shared by threads. Every registry is a fresh temporary directory, with
 * a 1 s TTL; the default one is tried only where it is refused (in a container).
 *
 * Built with -DFERROFLAKE_TEST_STORES=1 against a library with the `stores` feature, where
 * store URLs are tried for real (an unreachable server must fail within seconds), and the
 * four processes lease through a ferroflake service too, where FERROFLAKE_TEST_SERVICE
 * names one. */
#define _POSIX_C_SOURCE 200809L /* fork, waitpid, kill, mkdtemp, nanosleep */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#ifndef FERROFLAKE_TEST_STORES
#define FERROFLAKE_TEST_STORES 0
#endif

#define TTL_MS 1000
#define PROCESSES 4
#define IDS_PER_PROCESS 100000
/* What a process that could not lease or issue reports in place of its node id. */
#define REFUSED UINT64_MAX

static char registry_root[] = "/tmp/ferroflake-lease-c-XXXXXX";
static int registries;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A new, empty registry directory under the test's temporary root. */
static const char *new_registry(char *path, size_t size) {
    int n = snprintf(path, size, "%s/registry-%d", registry_root, ++registries);
    assert(n > 0 && (size_t)n < size);
    return path;
}

/* Short leases, so that fencing and takeovers happen within seconds: a 1 s TTL, and the
 * longest TTL of the registry's holders also 1 s (a new registry makes the first holder
 * wait that plus the quarantine). */
static ferroflake_lease_options short_lease(void) {
    ferroflake_lease_options options;
    CHECK_OK(FERROFLAKE_LEASE_OPTIONS_INIT(&options));
    options.ttl_ms = TTL_MS;
    options.max_ttl_ms = TTL_MS;
    options.quarantine_ms = 10;
    return options;
}

/* Twitter's layout with 0 node bits: a single node id, so a second holder must wait for
 * the first to lose it, and a takeover always lands on the same node id. */
static ferroflake_layout *one_node_layout(void) {
    const ferroflake_layout_spec spec = {41, 0, 22, 0, 1, INT64_C(1288834974657),
                                         FERROFLAKE_FIELD_ORDER_NODE_THEN_SEQUENCE};
    ferroflake_layout *layout = NULL;
    CHECK_OK(ferroflake_layout_new(&spec, &layout));
    return layout;
}

static ferroflake_layout *twitter(void) {
    ferroflake_layout *layout = NULL;
    CHECK_OK(ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, &layout));
    return layout;
}

static ferroflake_leased_generator *lease(const ferroflake_layout *layout, const char *registry,
                                          const ferroflake_lease_options *options) {
    ferroflake_leased_generator *g = NULL;
    CHECK_OK(ferroflake_leased_generator_new(layout, registry, options, &g));
    assert(g != NULL);
    return g;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Sorts ids[0..n] and counts repeated values. */
static size_t duplicates(uint64_t *ids, size_t n) {
    size_t i, count = 0;
    qsort(ids, n, sizeof ids[0], by_value);
    for (i = 1; i < n; i++) count += ids[i] == ids[i - 1];
    return count;
}

static void bad_input_is_refused(void) {
    char dir[256], file[300];
    ferroflake_layout *layout = twitter();
    ferroflake_layout *single = one_node_layout();
    ferroflake_lease_options options = short_lease();
    ferroflake_generator_options generator_options;
    ferroflake_leased_generator *g = NULL, *other = NULL, *sentinel = (ferroflake_leased_generator *)&g;
    ferroflake_lease_status status;
    uint64_t value = 42, ids[2] = {1, 2};
    size_t i;
    static const char *const malformed[] = {
        "", "ftp://x", "relative/dir", "./dir", "/", "file:/x", "file://host/x", "redis:127.0.0.1",
        "mailto:x", "/etc/hostname/leases",
    };

    new_registry(dir, sizeof dir);
    other = sentinel;
    /* NULL for each pointer of _new; a NULL registry address is the default, tried in
     * the_default_registry_is_refused_in_a_container. */
    CHECK_CODE(ferroflake_leased_generator_new(NULL, dir, &options, &other),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_lease_options_init(sizeof options, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(FERROFLAKE_LEASE_STATUS_INIT((ferroflake_lease_status *)NULL),
               FERROFLAKE_RESULT_NULL_ARGUMENT);
    assert(other == sentinel);

    /* Malformed addresses: the lease crate's words in the last error message. */
    for (i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        CHECK_CODE(ferroflake_leased_generator_new(layout, malformed[i], &options, &other),
                   FERROFLAKE_RESULT_BAD_ADDRESS);
        assert(strstr(ferroflake_last_error_message(), "bad registry address") != NULL);
    }
    CHECK_CODE(ferroflake_leased_generator_new(layout, "/tmp/\xff", &options, &other),
               FERROFLAKE_RESULT_INVALID_UTF8);
    /* A directory that cannot be made: the registry is unavailable. */
    CHECK_CODE(ferroflake_leased_generator_new(layout, "/proc/ferroflake-leases", &options, &other),
               FERROFLAKE_RESULT_UNAVAILABLE);

    /* Store URLs: refused at once without the stores, within seconds when unreachable. */
    {
        static const char *const stores[] = {"redis://127.0.0.1:1", "postgres://127.0.0.1:1/x"};
        for (i = 0; i < sizeof stores / sizeof stores[0]; i++) {
            double began = now_s();
            ferroflake_result want =
                FERROFLAKE_TEST_STORES ? FERROFLAKE_RESULT_UNAVAILABLE : FERROFLAKE_RESULT_NOT_BUILT;
            CHECK_CODE(ferroflake_leased_generator_new(layout, stores[i], &options, &other), want);
            printf("lease: %s refused in %.2f s: %s\n", stores[i], now_s() - began,
                   ferroflake_last_error_message());
            assert(now_s() - began < 15);
        }
    }

    /* Settings: a struct_size that is no version, a TTL below 10 ms, a manual clock, a
     * holder name that is not UTF-8. */
    options.struct_size = 12;
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, &other),
               FERROFLAKE_RESULT_STRUCT_SIZE);
    options = short_lease();
    options.ttl_ms = 5;
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, &other),
               FERROFLAKE_RESULT_INVALID_CONFIG);
    assert(strstr(ferroflake_last_error_message(), "invalid lease settings") != NULL);
    options = short_lease();
    CHECK_OK(FERROFLAKE_GENERATOR_OPTIONS_INIT(&generator_options));
    generator_options.clock = FERROFLAKE_CLOCK_MANUAL;
    options.generator_options = &generator_options;
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, &other),
               FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    generator_options.clock = 7;
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, &other),
               FERROFLAKE_RESULT_UNKNOWN_ENUM_VALUE);
    generator_options.clock = FERROFLAKE_CLOCK_FAST;
    generator_options.struct_size = 1;
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, &other),
               FERROFLAKE_RESULT_STRUCT_SIZE);
    options = short_lease();
    options.holder = "\xfe";
    CHECK_CODE(ferroflake_leased_generator_new(layout, dir, &options, &other),
               FERROFLAKE_RESULT_INVALID_UTF8);
    assert(other == sentinel);

    /* A live one on the single node id; a second holder finds no free node id. */
    options = short_lease();
    options.holder = "lease.c";
    g = lease(single, dir, &options);
    CHECK_CODE(ferroflake_leased_generator_new(single, dir, &options, &other),
               FERROFLAKE_RESULT_NO_FREE_NODE);
    assert(strstr(ferroflake_last_error_message(), "all 1 node ids are leased") != NULL);
    assert(other == sentinel);

    /* NULL for each pointer of the other calls; out-parameters stay untouched. */
    CHECK_CODE(ferroflake_leased_generator_next_id(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_next_id(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_next_ids(NULL, ids, 2), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_next_ids(g, NULL, 2), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_next_ids(g, NULL, 0), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_next_ids(g, ids, SIZE_MAX),
               FERROFLAKE_RESULT_BUFFER_TOO_LARGE);
    CHECK_CODE(ferroflake_leased_generator_node(NULL, &value), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_node(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_OK(FERROFLAKE_LEASE_STATUS_INIT(&status));
    CHECK_CODE(ferroflake_leased_generator_status(NULL, &status), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_status(g, NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    CHECK_CODE(ferroflake_leased_generator_release(NULL), FERROFLAKE_RESULT_NULL_ARGUMENT);
    ferroflake_leased_generator_free(NULL);
    assert(value == 42 && ids[0] == 1 && ids[1] == 2);
    status.struct_size = 0;
    CHECK_CODE(ferroflake_leased_generator_status(g, &status), FERROFLAKE_RESULT_STRUCT_SIZE);
    assert(status.struct_size == 0);

    /* It works: ids carry the node id, the status says held. */
    CHECK_OK(ferroflake_leased_generator_next_ids(g, ids, 2));
    assert(ids[1] > ids[0]);
    CHECK_OK(ferroflake_leased_generator_node(g, &value));
    assert(value == 0);
    CHECK_OK(FERROFLAKE_LEASE_STATUS_INIT(&status));
    CHECK_OK(ferroflake_leased_generator_status(g, &status));
    assert(status.state == FERROFLAKE_LEASE_HELD && status.node == 0 && status.failures == 0);
    assert(status.last_error == FERROFLAKE_RESULT_OK && status.fence_ms != FERROFLAKE_NO_FENCE);
    assert(status.reserved_high_water_ms >= status.fence_ms);
    /* The embedded registry's clock is this host's: read, and no further off than the
     * reading's own round trip and a millisecond's grain. */
    assert(status.clock_skew_ms != FERROFLAKE_NO_CLOCK_SKEW);
    assert((uint64_t)llabs(status.clock_skew_ms) <= status.clock_skew_uncertainty_ms + 2);
    CHECK_OK(ferroflake_leased_generator_release(g));

    /* A clock skew limit wider than the protocol covers (half of quarantine + margin). */
    options.max_clock_skew_ms = 60000;
    CHECK_CODE(ferroflake_leased_generator_new(single, dir, &options, &other),
               FERROFLAKE_RESULT_INVALID_CONFIG);
    assert(strstr(ferroflake_last_error_message(), "max_clock_skew") != NULL);
    assert(other == sentinel);
    options.max_clock_skew_ms = 0;

    /* The next holder must start after the released mark plus the skew allowance (1 s):
     * allowed to wait only 1 ms, it is refused. */
    sleep_ms(50); /* the quarantine */
    options.max_start_wait_ms = 1;
    CHECK_CODE(ferroflake_leased_generator_new(single, dir, &options, &other),
               FERROFLAKE_RESULT_BEHIND_HIGH_WATER);
    assert(other == sentinel);

    /* A new registry's floor (max TTL + quarantine, 20 s here) is longer than the start may
     * wait: refused at once, and the one node id is given back, so a second attempt is
     * refused for the same reason, not NO_FREE_NODE. */
    options = short_lease();
    options.max_ttl_ms = 20000;
    options.max_start_wait_ms = 100;
    new_registry(dir, sizeof dir);
    for (int attempt = 0; attempt < 2; attempt++) {
        CHECK_CODE(ferroflake_leased_generator_new(single, dir, &options, &other),
                   FERROFLAKE_RESULT_START_WAIT_TOO_LONG);
        assert(strstr(ferroflake_last_error_message(), "longer than max_start_wait 100ms") != NULL);
        assert(other == sentinel);
    }
    options = short_lease();

    /* A state file keeps the claim, private to its owner, for one live process at a time:
     * a second generator on it is refused with STATE_FILE; once the first is released the
     * file is free again. */
    {
        char state[512];
        struct stat st;
        ferroflake_leased_generator *first = NULL;
        int n;
        new_registry(dir, sizeof dir);
        n = snprintf(state, sizeof state, "%s-state/lease.state", dir);
        assert(n > 0 && (size_t)n < sizeof state);
        options.state_file = state;
        CHECK_OK(ferroflake_leased_generator_new(single, dir, &options, &first));
        assert(stat(state, &st) == 0 && (st.st_mode & 0777) == 0600);
        CHECK_CODE(ferroflake_leased_generator_new(single, dir, &options, &other),
                   FERROFLAKE_RESULT_STATE_FILE);
        assert(strstr(ferroflake_last_error_message(), "another live process") != NULL);
        assert(other == sentinel);
        CHECK_OK(ferroflake_leased_generator_release(first));
        CHECK_OK(ferroflake_leased_generator_new(single, dir, &options, &first));
        CHECK_OK(ferroflake_leased_generator_release(first));
    }
    options = short_lease();

    /* A start that waits says why, first, in one line on stderr: captured through a pipe. */
    {
        int pipe_fds[2], saved_stderr;
        char said[4096];
        ferroflake_leased_generator *waiting;
        ssize_t got;
        options = short_lease();
        new_registry(dir, sizeof dir);
        assert(pipe(pipe_fds) == 0);
        saved_stderr = dup(STDERR_FILENO);
        assert(saved_stderr >= 0 && dup2(pipe_fds[1], STDERR_FILENO) >= 0);
        waiting = lease(single, dir, &options);
        assert(dup2(saved_stderr, STDERR_FILENO) >= 0);
        close(saved_stderr);
        close(pipe_fds[1]);
        got = read(pipe_fds[0], said, sizeof said - 1);
        close(pipe_fds[0]);
        assert(got > 0);
        said[got] = '\0';
        assert(strncmp(said, "ferroflake: node id 0: ", 23) == 0);
        assert(strstr(said, "; waiting 1s") != NULL);
        CHECK_OK(ferroflake_leased_generator_release(waiting));
    }

    /* A file where the registry's directory should be. */
    snprintf(file, sizeof file, "%s/a-file", registry_root);
    {
        FILE *f = fopen(file, "w");
        assert(f != NULL);
        fclose(f);
    }
    CHECK_CODE(ferroflake_leased_generator_new(layout, file, &options, &other),
               FERROFLAKE_RESULT_BAD_ADDRESS);
    ferroflake_layout_free(single);
    ferroflake_layout_free(layout);
}

/* A child that inherited a leased generator through fork() is refused by every call, and
 * neither _free nor _release there lets go of the parent's lease. */
static void a_forked_child_is_refused_and_releases_nothing(void) {
    char dir[256];
    ferroflake_layout *single = one_node_layout();
    ferroflake_lease_options options = short_lease();
    ferroflake_leased_generator *g, *other = NULL;
    ferroflake_lease_status status;
    uint64_t before = 0, after = 0;
    int round;

    new_registry(dir, sizeof dir);
    g = lease(single, dir, &options);
    CHECK_OK(ferroflake_leased_generator_next_id(g, &before));
    for (round = 0; round < 2; round++) {
        pid_t child;
        int exit_status = 0, report[2];
        char verdict = 0;
        assert(pipe(report) == 0);
        fflush(NULL);
        child = fork();
        assert(child >= 0);
        if (child == 0) {
            uint64_t id = 0, ids[4] = {0, 0, 0, 0}, node = 7;
            ferroflake_lease_status st;
            int ok = 1;
            (void)FERROFLAKE_LEASE_STATUS_INIT(&st);
            ok &= ferroflake_leased_generator_next_id(g, &id) == FERROFLAKE_RESULT_GENERATOR_FORKED;
            ok &= strstr(ferroflake_last_error_message(), "inherited through fork()") != NULL;
            ok &= ferroflake_leased_generator_next_ids(g, ids, 4)
                  == FERROFLAKE_RESULT_GENERATOR_FORKED;
            ok &= ferroflake_leased_generator_node(g, &node) == FERROFLAKE_RESULT_GENERATOR_FORKED;
            ok &= ferroflake_leased_generator_status(g, &st) == FERROFLAKE_RESULT_GENERATOR_FORKED;
            ok &= id == 0 && ids[0] == 0 && ids[3] == 0 && node == 7;
            if (round == 0) {
                ferroflake_leased_generator_free(g);
            } else {
                ok &= ferroflake_leased_generator_release(g) == FERROFLAKE_RESULT_GENERATOR_FORKED;
            }
            /* The verdict goes through the pipe, then the child ends by SIGKILL: what it
             * inherited from the parent's renewal thread can never be freed here (fork
             * copies memory, not threads), and a leak check at exit would only list it. */
            ferroflake_layout_free(single);
            verdict = ok ? 'y' : 'n';
            if (write(report[1], &verdict, 1) != 1) abort();
            kill(getpid(), SIGKILL);
        }
        close(report[1]);
        assert(read(report[0], &verdict, 1) == 1 && verdict == 'y');
        close(report[0]);
        assert(waitpid(child, &exit_status, 0) == child);
        assert(WIFSIGNALED(exit_status) && WTERMSIG(exit_status) == SIGKILL);
        /* Still the parent's: past the quarantine, nobody else can take the node id. */
        sleep_ms(100);
        CHECK_CODE(ferroflake_leased_generator_new(single, dir, &options, &other),
                   FERROFLAKE_RESULT_NO_FREE_NODE);
        CHECK_OK(FERROFLAKE_LEASE_STATUS_INIT(&status));
        CHECK_OK(ferroflake_leased_generator_status(g, &status));
        assert(status.state == FERROFLAKE_LEASE_HELD);
    }
    CHECK_OK(ferroflake_leased_generator_next_id(g, &after));
    assert(after > before);
    CHECK_OK(ferroflake_leased_generator_release(g));
    ferroflake_layout_free(single);
}

/* Four processes lease from one registry at the same time: four node ids, and no id twice. */
/* A holder with a state file, killed with SIGKILL: a new generator on the same file resumes
 * its claim at once, on the one node id the registry still holds for it (without the file,
 * NO_FREE_NODE until that claim's TTL and quarantine pass), and issues above its ids. */
static void a_killed_holder_is_resumed_from_its_state_file(void) {
    char dir[256], state[512];
    ferroflake_layout *single = one_node_layout();
    ferroflake_lease_options options = short_lease(), plain = short_lease();
    ferroflake_leased_generator *resumed = NULL, *other = NULL;
    uint64_t last = 0, next = 0;
    int report[2], n;
    pid_t child;

    new_registry(dir, sizeof dir);
    n = snprintf(state, sizeof state, "%s-state/lease.state", dir);
    assert(n > 0 && (size_t)n < sizeof state);
    options.state_file = state;
    assert(pipe(report) == 0);
    fflush(NULL);
    child = fork();
    assert(child >= 0);
    if (child == 0) {
        ferroflake_leased_generator *g = NULL;
        uint64_t id = 0;
        int ok = ferroflake_leased_generator_new(single, dir, &options, &g) == FERROFLAKE_RESULT_OK;
        ok = ok && ferroflake_leased_generator_next_id(g, &id) == FERROFLAKE_RESULT_OK;
        ok = ok && write(report[1], &id, sizeof id) == (ssize_t)sizeof id;
        if (!ok) _exit(1);
        pause(); /* holding the claim until killed */
        _exit(0);
    }
    close(report[1]);
    assert(read(report[0], &last, sizeof last) == (ssize_t)sizeof last);
    close(report[0]);
    assert(kill(child, SIGKILL) == 0);
    assert(waitpid(child, NULL, 0) == child);

    CHECK_CODE(ferroflake_leased_generator_new(single, dir, &plain, &other),
               FERROFLAKE_RESULT_NO_FREE_NODE);
    resumed = lease(single, dir, &options);
    CHECK_OK(ferroflake_leased_generator_next_id(resumed, &next));
    assert(next > last);
    CHECK_OK(ferroflake_leased_generator_release(resumed));
    ferroflake_layout_free(single);
}

/* Four processes lease from the registry at `registry` at once: distinct node ids, no id
 * twice. Each writes its ids to a file in `dir`. */
static void four_processes_get_distinct_nodes_and_ids(const char *registry, const char *dir) {
    char path[300];
    int ready[2], go[2], i;
    pid_t children[PROCESSES];
    uint64_t nodes[PROCESSES];
    uint64_t *all;
    assert(pipe(ready) == 0 && pipe(go) == 0);
    fflush(NULL);
    for (i = 0; i < PROCESSES; i++) {
        children[i] = fork();
        assert(children[i] >= 0);
        if (children[i] == 0) {
            ferroflake_layout *layout = twitter();
            ferroflake_lease_options options = short_lease();
            ferroflake_leased_generator *g = NULL;
            uint64_t node = 0, *ids = malloc(sizeof(uint64_t) * IDS_PER_PROCESS);
            char byte;
            FILE *out;
            int ok = ids != NULL;
            close(ready[0]);
            close(go[1]);
            ok = ok && ferroflake_leased_generator_new(layout, registry, &options, &g)
                           == FERROFLAKE_RESULT_OK;
            ok = ok && ferroflake_leased_generator_node(g, &node) == FERROFLAKE_RESULT_OK;
            ok = ok && ferroflake_leased_generator_next_ids(g, ids, IDS_PER_PROCESS / 2)
                           == FERROFLAKE_RESULT_OK;
            if (!ok) {
                /* Said, and told to the parent, which would otherwise wait for ever. */
                fprintf(stderr, "lease: process %d: %s\n", i, ferroflake_last_error_message());
                node = REFUSED;
            }
            /* Hold the lease until every process has one. */
            ok = write(ready[1], &node, sizeof node) == (ssize_t)sizeof node && ok;
            ok = ok && read(go[0], &byte, 1) == 0;
            ok = ok && ferroflake_leased_generator_next_ids(g, ids + IDS_PER_PROCESS / 2,
                                                            IDS_PER_PROCESS / 2)
                           == FERROFLAKE_RESULT_OK;
            ok = ok && ferroflake_leased_generator_release(g) == FERROFLAKE_RESULT_OK;
            snprintf(path, sizeof path, "%s/ids-%d", dir, i);
            out = fopen(path, "wb");
            ok = ok && out != NULL && fwrite(ids, sizeof ids[0], IDS_PER_PROCESS, out) == IDS_PER_PROCESS;
            if (out != NULL) ok = fclose(out) == 0 && ok;
            free(ids);
            ferroflake_layout_free(layout);
            exit(ok ? 0 : 1); /* exit, not _exit: the thread-local destructors run */
        }
    }
    close(ready[1]);
    close(go[0]);
    for (i = 0; i < PROCESSES; i++) {
        assert(read(ready[0], &nodes[i], sizeof nodes[i]) == (ssize_t)sizeof nodes[i]);
    }
    close(go[1]); /* every holder reads end-of-file: go on */
    for (i = 0; i < PROCESSES; i++) assert(nodes[i] != REFUSED);
    close(ready[0]);
    all = malloc(sizeof(uint64_t) * PROCESSES * IDS_PER_PROCESS);
    assert(all != NULL);
    for (i = 0; i < PROCESSES; i++) {
        int status = 0;
        FILE *in;
        assert(waitpid(children[i], &status, 0) == children[i]);
        assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        snprintf(path, sizeof path, "%s/ids-%d", dir, i);
        in = fopen(path, "rb");
        assert(in != NULL);
        assert(fread(all + (size_t)i * IDS_PER_PROCESS, sizeof all[0], IDS_PER_PROCESS, in)
               == IDS_PER_PROCESS);
        fclose(in);
    }
    qsort(nodes, PROCESSES, sizeof nodes[0], by_value);
    for (i = 1; i < PROCESSES; i++) assert(nodes[i] != nodes[i - 1]);
    assert(duplicates(all, (size_t)PROCESSES * IDS_PER_PROCESS) == 0);
    fflush(stdout);
    printf("lease: %d processes on %s, node ids %llu %llu %llu %llu, %d ids, 0 duplicates\n",
           PROCESSES, registry, (unsigned long long)nodes[0], (unsigned long long)nodes[1],
           (unsigned long long)nodes[2], (unsigned long long)nodes[3], PROCESSES * IDS_PER_PROCESS);
    free(all);
}

/* The holder of the only node id is stopped past its TTL; another process takes the node id
 * and issues; the holder, continued, is fenced (LEASE_EXPIRED, then LOST), and no id of one
 * is an id of the other. */
static void a_stopped_holder_is_fenced_after_a_takeover(void) {
    char dir[256], path[300];
    int ready[2];
    pid_t holder;
    uint64_t *taker_ids, *all;
    size_t taker_count = 0, holder_count, cap = 1 << 20;
    ferroflake_layout *single = one_node_layout();
    ferroflake_lease_options options = short_lease();
    ferroflake_leased_generator *taker;
    ferroflake_lease_status status;
    int exit_status = 0;
    double stopped_at, continued_at = 0;
    FILE *in;
    long size;

    new_registry(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/holder-ids", registry_root);
    assert(pipe(ready) == 0);
    fflush(NULL);
    holder = fork();
    assert(holder >= 0);
    if (holder == 0) {
        /* Issues until refused, pacing itself; writes every id it got, then says how it
         * ended through its exit status: 0 = fenced, then lost. */
        ferroflake_leased_generator *g = NULL;
        ferroflake_lease_status st;
        ferroflake_result code = FERROFLAKE_RESULT_OK;
        FILE *out = fopen(path, "wb");
        uint64_t id = 0;
        int i, ok = out != NULL;
        close(ready[0]);
        ok = ok && ferroflake_leased_generator_new(single, dir, &options, &g) == FERROFLAKE_RESULT_OK;
        ok = ok && write(ready[1], "x", 1) == 1;
        while (ok && (code = ferroflake_leased_generator_next_id(g, &id)) == FERROFLAKE_RESULT_OK) {
            ok = fwrite(&id, sizeof id, 1, out) == 1;
            sleep_ms(1);
        }
        ok = ok && code == FERROFLAKE_RESULT_LEASE_EXPIRED;
        if (!ok) fprintf(stderr, "holder: stopped by %u: %s\n", (unsigned)code,
                         ferroflake_last_error_message());
        /* The renewal thread learns that the lease was taken. */
        (void)FERROFLAKE_LEASE_STATUS_INIT(&st);
        for (i = 0; ok && i < 100; i++) {
            ok = ferroflake_leased_generator_status(g, &st) == FERROFLAKE_RESULT_OK;
            if (st.state == FERROFLAKE_LEASE_LOST) break;
            sleep_ms(50);
        }
        ok = ok && st.state == FERROFLAKE_LEASE_LOST;
        ok = ok && ferroflake_leased_generator_next_id(g, &id) == FERROFLAKE_RESULT_LEASE_EXPIRED;
        ok = ok && strstr(ferroflake_last_error_message(), "was lost") != NULL;
        if (!ok) fprintf(stderr, "holder: state %u: %s\n", (unsigned)st.state,
                         ferroflake_last_error_message());
        /* The lease is lost: releasing it records nothing and succeeds. */
        ok = ok && ferroflake_leased_generator_release(g) == FERROFLAKE_RESULT_OK;
        if (out != NULL) ok = fclose(out) == 0 && ok;
        ferroflake_layout_free(single);
        exit(ok ? 0 : 1); /* exit, not _exit: the thread-local destructors run */
    }
    close(ready[1]);
    {
        char byte;
        assert(read(ready[0], &byte, 1) == 1);
        close(ready[0]);
    }
    sleep_ms(200);
    assert(kill(holder, SIGSTOP) == 0);
    stopped_at = now_s();
    sleep_ms(TTL_MS + 500); /* past the TTL and the quarantine */

    /* The taker gets the same (only) node id, waiting out the holder's reserved ids. */
    taker = lease(single, dir, &options);
    printf("lease: node id taken over %.2f s after SIGSTOP\n", now_s() - stopped_at);
    taker_ids = malloc(sizeof(uint64_t) * cap);
    assert(taker_ids != NULL);
    while (taker_count < cap) {
        CHECK_OK(ferroflake_leased_generator_next_id(taker, &taker_ids[taker_count]));
        taker_count++;
        if (continued_at == 0 && taker_count >= 1000) {
            assert(kill(holder, SIGCONT) == 0);
            continued_at = now_s();
        }
        if (continued_at != 0 && now_s() - continued_at > 1.0) break;
        if (taker_count % 64 == 0) sleep_ms(1);
    }
    assert(waitpid(holder, &exit_status, 0) == holder);
    assert(WIFEXITED(exit_status) && WEXITSTATUS(exit_status) == 0);
    CHECK_OK(FERROFLAKE_LEASE_STATUS_INIT(&status));
    CHECK_OK(ferroflake_leased_generator_status(taker, &status));
    assert(status.state == FERROFLAKE_LEASE_HELD && status.node == 0);
    CHECK_OK(ferroflake_leased_generator_release(taker));

    in = fopen(path, "rb");
    assert(in != NULL);
    assert(fseek(in, 0, SEEK_END) == 0);
    size = ftell(in);
    assert(size > 0 && size % 8 == 0);
    rewind(in);
    holder_count = (size_t)size / 8;
    all = malloc(sizeof(uint64_t) * (holder_count + taker_count));
    assert(all != NULL);
    assert(fread(all, 8, holder_count, in) == holder_count);
    fclose(in);
    memcpy(all + holder_count, taker_ids, taker_count * sizeof(uint64_t));
    assert(duplicates(all, holder_count + taker_count) == 0);
    printf("lease: the stopped holder issued %zu ids, the taker %zu, 0 duplicates; the holder was "
           "fenced when continued\n", holder_count, taker_count);
    free(all);
    free(taker_ids);
    ferroflake_layout_free(single);
}

/* Inside a container the default registry (a NULL address) is one of several on the host,
 * each container having its own /var/tmp: refused, saying that IDs can collide and what to
 * use instead. The container is made known by its `container` variable (as systemd-nspawn,
 * Podman and LXC set it), so the test says the same inside CI's container and on a host;
 * it is set before any thread starts, and removed again. */
static void the_default_registry_is_refused_in_a_container(void) {
    ferroflake_layout *layout = twitter();
    ferroflake_lease_options options = short_lease();
    ferroflake_leased_generator *g = NULL;
    const char *message;
    assert(setenv("container", "ferroflake-test", 1) == 0);
    CHECK_CODE(ferroflake_leased_generator_new(layout, NULL, &options, &g),
               FERROFLAKE_RESULT_UNAVAILABLE);
    assert(g == NULL);
    message = ferroflake_last_error_message();
    printf("lease: the default registry in a container: %s\n", message);
    assert(strstr(message, "runs in a container (container=ferroflake-test)") != NULL);
    assert(strstr(message, "IDs can collide with other containers'") != NULL);
    assert(strstr(message, "a mounted volume") != NULL);
    assert(strstr(message, "etcd://, redis://, zk://, postgres://") != NULL);
    assert(unsetenv("container") == 0);
    ferroflake_layout_free(layout);
}

#define THREADS 4
#define IDS_PER_THREAD 50000

struct worker {
    const ferroflake_leased_generator *g;
    uint64_t *ids;
    int ok;
};

static void *take_ids(void *arg) {
    struct worker *w = arg;
    int i;
    w->ok = 1;
    for (i = 0; i < IDS_PER_THREAD && w->ok; i++) {
        w->ok = ferroflake_leased_generator_next_id(w->g, &w->ids[i]) == FERROFLAKE_RESULT_OK;
        if (i > 0) w->ok = w->ok && w->ids[i] > w->ids[i - 1];
    }
    return NULL;
}

/* One leased generator, four threads: each thread's ids increase, none repeats. */
static void threads_share_one_leased_generator(void) {
    char dir[256];
    ferroflake_layout *layout = twitter();
    ferroflake_lease_options options = short_lease();
    ferroflake_leased_generator *g;
    pthread_t threads[THREADS];
    /* Under valgrind, which runs one thread at a time, four busy threads can keep the
     * renewal thread waiting past a 1 s TTL; this test is about sharing, not fencing. */
    options.ttl_ms = 5000;
    options.max_ttl_ms = 5000;
    struct worker workers[THREADS];
    uint64_t *all = malloc(sizeof(uint64_t) * THREADS * IDS_PER_THREAD);
    int t;
    assert(all != NULL);
    new_registry(dir, sizeof dir);
    g = lease(layout, dir, &options);
    for (t = 0; t < THREADS; t++) {
        workers[t].g = g;
        workers[t].ids = all + (size_t)t * IDS_PER_THREAD;
        assert(pthread_create(&threads[t], NULL, take_ids, &workers[t]) == 0);
    }
    for (t = 0; t < THREADS; t++) {
        assert(pthread_join(threads[t], NULL) == 0);
        assert(workers[t].ok);
    }
    CHECK_OK(ferroflake_leased_generator_release(g));
    assert(duplicates(all, (size_t)THREADS * IDS_PER_THREAD) == 0);
    printf("lease: %d threads on one leased generator, %d ids, 0 duplicates\n", THREADS,
           THREADS * IDS_PER_THREAD);
    free(all);
    ferroflake_layout_free(layout);
}

/* Removes the temporary registries (files two levels deep at most). */
static void remove_tree(const char *root) {
    char command[512];
    int n = snprintf(command, sizeof command, "rm -rf '%s'", root);
    assert(n > 0 && (size_t)n < sizeof command);
    assert(system(command) == 0);
}

int main(void) {
    assert(mkdtemp(registry_root) != NULL);
    the_default_registry_is_refused_in_a_container();
    bad_input_is_refused();
    a_forked_child_is_refused_and_releases_nothing();
    a_killed_holder_is_resumed_from_its_state_file();
    threads_share_one_leased_generator();
    {
        char dir[256];
        new_registry(dir, sizeof dir);
        four_processes_get_distinct_nodes_and_ids(dir, dir);
    }
#if FERROFLAKE_TEST_STORES
    /* Through a ferroflake service, where the suite started one (scripts/test-c.sh). */
    if (getenv("FERROFLAKE_TEST_SERVICE") != NULL) {
        four_processes_get_distinct_nodes_and_ids(getenv("FERROFLAKE_TEST_SERVICE"), registry_root);
    }
#endif
    a_stopped_holder_is_fenced_after_a_takeover();
    remove_tree(registry_root);
    printf("lease: ok\n");
    return 0;
}
