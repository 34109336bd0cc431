"""One generator shared by many threads: no duplicates, no lost order per thread."""

from __future__ import annotations

import threading

from ferroflake import Generator, Layout, ManualClock

THREADS = 8
PER_THREAD = 100_000


def run_threads(work: list[list[int]], target: object) -> None:
    barrier = threading.Barrier(THREADS)

    def body(slot: list[int]) -> None:
        barrier.wait()
        target(slot)  # type: ignore[operator]

    threads = [threading.Thread(target=body, args=(slot,)) for slot in work]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_eight_threads_share_one_generator_without_duplicates() -> None:
    gen = Generator(401)  # system clock, twitter layout: capped at 4096 IDs per ms
    results: list[list[int]] = [[] for _ in range(THREADS)]

    def issue(out: list[int]) -> None:
        next_id = gen.next_id
        out.extend(next_id() for _ in range(PER_THREAD))

    run_threads(results, issue)
    every = [i for r in results for i in r]
    assert len(every) == THREADS * PER_THREAD
    assert len(set(every)) == len(every), "duplicate IDs"
    for r in results:
        assert r == sorted(r), "a thread saw IDs go backwards"
    assert {gen.decode(i).node for i in (min(every), max(every))} == {401}


def test_threads_mixing_batches_and_single_ids_never_overlap() -> None:
    clock = ManualClock(1_700_000_000_000)
    gen = Generator(402, Layout.custom(41, 10, 8, epoch=0), clock=clock)  # 256 per tick
    results: list[list[int]] = [[] for _ in range(THREADS)]

    def issue(out: list[int]) -> None:
        for _ in range(200):
            out.extend(gen.next_ids(37))
            out.append(gen.next_id())

    run_threads(results, issue)
    every = [i for r in results for i in r]
    assert len(every) == THREADS * 200 * 38
    assert len(set(every)) == len(every)
