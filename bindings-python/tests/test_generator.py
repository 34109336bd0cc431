"""Generator behaviour through Python: order, decode, batches, shards, clocks and options."""

from __future__ import annotations

import datetime as dt
import signal
import threading
import time
from typing import Any

import pytest

import ferroflake
from ferroflake import Generator, Layout, ManualClock

NOW_MS = 1_700_000_000_000

# A node id has one live generator per process, and a later one continues after the IDs an
# earlier one issued: each test below takes node ids no other test of this process uses.


def test_ids_increase_and_decode_to_now_on_the_system_clock() -> None:
    gen = Generator(210)
    before = time.time_ns() // 1_000_000
    ids = [gen.next_id() for _ in range(1000)]
    after = time.time_ns() // 1_000_000
    assert ids == sorted(set(ids))
    for id_ in (ids[0], ids[-1]):
        parts = gen.decode(id_)
        assert parts.node == 210 and parts.shard == 0
        assert before <= parts.timestamp_ms <= after
        assert parts.datetime.tzinfo is not None
        assert parts.datetime.utcoffset() == dt.timedelta(0)
        assert parts.datetime == dt.datetime.fromtimestamp(
            parts.timestamp_ms // 1000, dt.timezone.utc
        ) + dt.timedelta(milliseconds=parts.timestamp_ms % 1000)
    assert Layout.twitter().decode(ids[0]) == gen.decode(ids[0])


def test_the_fast_clock_issues_ids_near_the_system_time() -> None:
    gen = Generator(211, clock="fast")
    id_ = gen.next_id()
    assert abs(gen.decode(id_).timestamp_ms - time.time_ns() // 1_000_000) < 1000


def test_a_manual_clock_makes_ids_deterministic() -> None:
    layout = Layout.twitter()
    # Two generators on two node ids (one node id's second generator would continue after
    # its first): each gives exactly the IDs its clock's time says.
    for node in (212, 214):
        ids = Generator(node, clock=ManualClock(NOW_MS)).next_ids(10)
        assert ids == [layout.compose(NOW_MS, node=node, sequence=s) for s in range(10)]


def test_next_ids_returns_consecutive_ids_across_ticks() -> None:
    clock = ManualClock(NOW_MS)
    gen = Generator(213, clock=clock)
    ids = gen.next_ids(10_000)  # 4096 per tick: waits move the manual clock on
    assert len(ids) == 10_000
    assert all(isinstance(i, int) for i in ids)
    assert ids == sorted(set(ids))
    assert gen.decode(ids[-1]).timestamp_ms == NOW_MS + 2
    assert gen.counters.waits >= 2
    assert gen.next_id() > ids[-1]
    assert gen.next_ids(0) == []


def test_a_used_up_sequence_waits_for_the_next_tick_and_counts_it() -> None:
    clock = ManualClock(NOW_MS)
    gen = Generator(230, Layout.custom(41, 10, 2, epoch=0), clock=clock)  # 4 IDs per tick
    ids = [gen.next_id() for _ in range(5)]
    assert [gen.decode(i).sequence for i in ids] == [0, 1, 2, 3, 0]
    assert gen.decode(ids[4]).timestamp_ms == NOW_MS + 1
    counters = gen.counters
    assert (counters.waits, counters.borrowed_ticks, counters.rollbacks) == (1, 0, 0)
    assert "waits=1" in repr(counters)


def test_drift_borrows_future_ticks_instead_of_waiting() -> None:
    clock = ManualClock(NOW_MS)
    gen = Generator(231, Layout.custom(41, 10, 1, epoch=0), clock=clock, max_drift_ticks=2)
    ids = [gen.next_id() for _ in range(6)]  # 2 per tick: ticks now, now+1, now+2
    assert [gen.decode(i).timestamp_ms - NOW_MS for i in ids] == [0, 0, 1, 1, 2, 2]
    assert clock.now_ms() == NOW_MS
    assert gen.counters.borrowed_ticks == 2
    assert gen.counters.waits == 0


def test_a_small_rollback_is_waited_out_and_counted() -> None:
    clock = ManualClock(NOW_MS)
    gen = Generator(215, clock=clock, max_backward_wait_ms=5)
    first = gen.next_id()
    clock.rewind_ms(3)
    second = gen.next_id()
    assert second > first
    assert gen.counters.rollbacks >= 1


def test_resume_after_skips_the_previous_holders_ticks() -> None:
    clock = ManualClock(NOW_MS)
    gen = Generator(216, clock=clock, resume_after_ms=NOW_MS + 3)  # within the 5 ms wait
    assert gen.last_issued_ms == NOW_MS + 3
    assert gen.decode(gen.next_id()).timestamp_ms == NOW_MS + 4
    # 10 ms ahead is more than the 5 ms wait: refused now, not as a rollback at next_id().
    with pytest.raises(ferroflake.OutOfRangeError) as info:
        Generator(217, clock=clock, resume_after_ms=NOW_MS + 20)
    assert info.value.kind == "RESUME_IN_FUTURE"
    clock.set_ms(NOW_MS + 21)  # once the clock has passed the mark, as a lease waits for
    gen = Generator(217, clock=clock, resume_after_ms=NOW_MS + 20)
    assert gen.decode(gen.next_id()).timestamp_ms == NOW_MS + 21


def test_resume_after_id_issues_above_an_old_generators_id() -> None:
    twitter, sonyflake = Layout.from_name("twitter"), Layout.from_name("sonyflake")
    # A sonyflake fleet's highest ID, issued at NOW_MS with the last sequence number.
    old_id = sonyflake.compose(NOW_MS, node=3, sequence=255)
    after = twitter.resume_after_id(old_id, sonyflake)
    assert after == max(NOW_MS // 10 * 10 + 9, twitter.decode(old_id).timestamp_ms)
    gen = Generator(218, clock=ManualClock(after), resume_after_ms=after)
    first = gen.next_id()
    assert first > old_id and twitter.decode(first).timestamp_ms > NOW_MS // 10 * 10 + 9
    # Without an old layout the ID is read with this one.
    assert twitter.resume_after_id(first) == twitter.decode(first).timestamp_ms
    with pytest.raises(ferroflake.OutOfRangeError) as info:
        Layout.from_name("js53").resume_after_id(2**60)
    assert info.value.kind == "ID_OUT_OF_RANGE"
    with pytest.raises(TypeError):
        twitter.resume_after_id(1, "sonyflake")  # type: ignore[arg-type]


MAX_U64 = 2**64 - 1


def test_the_largest_backward_wait_waits_one_tick_for_a_used_up_sequence() -> None:
    # tick + max_backward_wait_ms overflowed in the core: a panic (PanicException) in a
    # debug build, a false ClockStalledError in release instead of a 1 ms wait.
    clock = ManualClock(NOW_MS)
    gen = Generator(219, clock=clock, max_backward_wait_ms=MAX_U64)
    ids = gen.next_ids(4097)
    assert ids == sorted(set(ids))
    assert gen.decode(ids[-1]).timestamp_ms == NOW_MS + 1
    ids.append(gen.next_id())  # and one by one
    clock.rewind_ms(3_600_000)  # an hour back: waited out ("as long as it takes", a day)
    assert gen.next_id() > ids[-1]
    clock.rewind_ms(2 * 86_400_000)  # two days back: beyond a day, refused at once
    with pytest.raises(ferroflake.ClockMovedBackwardsError):
        gen.next_id()


@pytest.mark.parametrize(
    ("tick_ms", "node"), [(MAX_U64, 232), (MAX_U64 // 2, 233), (2 * 86_400_000, 234)]
)
def test_a_huge_tick_gives_its_ids_then_a_typed_error_without_waiting(tick_ms: int, node: int) -> None:
    # 2 IDs per tick.
    layout = Layout.custom(1, 10, 1, tick_ms=tick_ms, epoch=NOW_MS - 1000)
    clock = ManualClock(NOW_MS)
    gen = Generator(node, layout, clock=clock, max_backward_wait_ms=MAX_U64)
    # Sequence 1 of tick 0 (sequence 0 of tick 0 is never issued).
    assert gen.next_id() == node << 1 | 1
    with pytest.raises(ferroflake.ClockStalledError):
        gen.next_id()  # the next tick is more than a day away
    assert clock.now_ms() == NOW_MS
    epoch = time.time_ns() // 1_000_000 - 1000
    on_the_system_clock = Generator(node + 3, Layout.custom(1, 10, 1, tick_ms=tick_ms, epoch=epoch))
    on_the_system_clock.next_id()
    with pytest.raises(ferroflake.ClockStalledError):
        on_the_system_clock.next_id()


def test_a_manual_clock_saturates_at_both_ends() -> None:
    clock = ManualClock(NOW_MS)
    clock.advance_ms(MAX_U64)
    assert clock.now_ms() == MAX_U64
    clock.rewind_ms(MAX_U64 - 5)
    assert clock.now_ms() == 5


def test_shards_land_in_the_lowest_bits() -> None:
    gen = Generator(50, Layout.sharded(), clock=ManualClock(NOW_MS))
    for shard in (0, 7, 15):
        parts = gen.decode(gen.next_id_for_shard(shard))
        assert (parts.node, parts.shard) == (50, shard)


def test_other_layouts_decode_their_own_ids() -> None:
    # Presets share their largest node id: each one's clock is ahead of the one before, which
    # its generator continues after.
    for index, name in enumerate(ferroflake.PRESET_NAMES):
        layout = Layout.from_name(name)
        now_ms = NOW_MS + 1234 + 10_000 * index
        gen = Generator(layout.max_node, layout, clock=ManualClock(now_ms))
        parts = gen.decode(gen.next_id())
        assert parts.node == layout.max_node
        assert parts.timestamp_ms == now_ms - (now_ms - layout.epoch_ms) % layout.tick_ms
        assert gen.layout == layout
        del gen  # the next layout may share this node id


def test_a_node_id_has_one_live_generator_per_process() -> None:
    clock = ManualClock(NOW_MS)
    first = Generator(240, clock=clock)
    last = first.next_id()
    for layout, other_clock in [(Layout.js53(), "system"), (Layout.twitter(), clock)]:
        with pytest.raises(ferroflake.NodeInUseError) as info:
            Generator(240, layout, clock=other_clock)
        assert info.value.kind == "NODE_IN_USE" and info.value.code == 29
        assert "node id 240 already has a live generator" in str(info.value)
        assert not isinstance(info.value, ValueError)
    del first, info  # the node id is free once its generator is gone

    with pytest.raises(ferroflake.NodeInUseError, match="could repeat them"):
        Generator(240, clock=ManualClock(NOW_MS - 60_000))
    again = Generator(240, clock=clock)
    assert again.next_id() > last
    assert again.decode(again.next_id()).timestamp_ms > NOW_MS


def test_generator_attributes_and_repr() -> None:
    gen = Generator(12, Layout.discord())
    assert gen.node_id == 12
    assert gen.layout == Layout.discord()
    assert "node_id=12" in repr(gen) and "discord" in repr(gen)


def test_a_wait_releases_the_gil_for_other_threads() -> None:
    # 2 IDs per 300 ms tick: the third call waits for the next tick on the system clock.
    layout = Layout.custom(41, 10, 1, tick_ms=300, epoch=0)
    gen = Generator(238, layout)
    progress = 0
    stop = threading.Event()

    def spin() -> None:
        nonlocal progress
        while not stop.is_set():
            progress += 1

    gen.next_ids(2)  # whichever tick we are in, at most 2 more fit in it
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        time.sleep(0.01)
        before = progress
        gen.next_ids(3)  # must wait at least once, for up to 300 ms
        during = progress - before
    finally:
        stop.set()
        spinner.join()
    assert gen.counters.waits >= 1
    assert during > 1000, "the other thread did not run while the generator waited"


class Interrupted(Exception):
    pass


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
def test_a_long_batch_on_a_slow_layout_answers_signals() -> None:
    layout = Layout.custom(41, 10, 1, tick_ms=100, epoch=0)  # 2 IDs per 100 ms
    gen = Generator(239, layout)
    before = gen.next_id()

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, 0.25)
    try:
        with pytest.raises(Interrupted):
            gen.next_ids(1000)  # 50 s of IDs at this layout's rate
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - start < 10
    assert gen.next_id() > before  # IDs reserved by the interrupted batch are skipped
