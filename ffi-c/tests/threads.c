/* Several pthreads share one generator handle (system clock): every id is unique, and each
 * thread sees its own ids strictly increasing. Half the threads use next_id, half next_ids.
 * Run plainly, under valgrind, ASan and ThreadSanitizer. Built with
 * -DFERROFLAKE_TEST_DATA_RACE, the workers also bump one unsynchronised counter: a data race
 * ThreadSanitizer must report, so the suite knows the TSan run can fail. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

#define THREADS 4
#define PER_THREAD 20000
#define BATCH 64

#ifdef FERROFLAKE_TEST_DATA_RACE
static size_t calls_made;
#define COUNT_CALL() (calls_made++)
#else
#define COUNT_CALL() ((void)0)
#endif

struct worker {
    const ferroflake_generator *generator;
    int batched;
    uint64_t ids[PER_THREAD];
};

static void *issue(void *arg) {
    struct worker *w = arg;
    size_t i = 0;
    while (i < PER_THREAD) {
        if (w->batched) {
            size_t n = PER_THREAD - i < BATCH ? PER_THREAD - i : BATCH;
            CHECK_OK(ferroflake_generator_next_ids(w->generator, &w->ids[i], n));
            COUNT_CALL();
            i += n;
        } else {
            CHECK_OK(ferroflake_generator_next_id(w->generator, &w->ids[i]));
            COUNT_CALL();
            i++;
        }
    }
    for (i = 1; i < PER_THREAD; i++) {
        assert(w->ids[i] > w->ids[i - 1]);
    }
    return NULL;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void) {
    ferroflake_layout *layout = NULL;
    ferroflake_generator *generator = NULL;
    struct worker *workers = calloc(THREADS, sizeof *workers);
    pthread_t threads[THREADS];
    uint64_t *all = malloc(sizeof(uint64_t) * THREADS * PER_THREAD);
    size_t i, duplicates = 0;
    assert(workers != NULL && all != NULL);

    CHECK_OK(ferroflake_layout_new_preset(FERROFLAKE_PRESET_TWITTER, &layout));
    CHECK_OK(ferroflake_generator_new(layout, 5, NULL, &generator));
    for (i = 0; i < THREADS; i++) {
        workers[i].generator = generator;
        workers[i].batched = (int)(i % 2);
        assert(pthread_create(&threads[i], NULL, issue, &workers[i]) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        assert(pthread_join(threads[i], NULL) == 0);
    }
    for (i = 0; i < THREADS; i++) {
        size_t j;
        for (j = 0; j < PER_THREAD; j++) {
            all[i * PER_THREAD + j] = workers[i].ids[j];
        }
    }
    qsort(all, THREADS * PER_THREAD, sizeof *all, compare);
    for (i = 1; i < THREADS * PER_THREAD; i++) {
        duplicates += all[i] == all[i - 1];
    }
    printf("threads: %d threads, %d ids, %zu duplicates\n", THREADS, THREADS * PER_THREAD,
           duplicates);
    assert(duplicates == 0);
    ferroflake_generator_free(generator);
    ferroflake_layout_free(layout);
    free(all);
    free(workers);
    return 0;
}
