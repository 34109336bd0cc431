"""SegmentAllocator.order_numbers(): date-prefixed order numbers on a SQLite table, days
in a time zone, exhaustion at the width, bad settings, threads."""

from __future__ import annotations

import datetime as dt
import os
import threading
from pathlib import Path
from typing import Iterator

import pytest

from ferroflake import (
    ManualClock,
    SegmentAllocator,
    SegmentClosedError,
    SegmentConfigError,
    SegmentExhaustedError,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="segments are Unix-only")

# 2026-11-22 23:59:59 UTC: 2026-11-23 07:59:59 in Shanghai (UTC+8), 2026-11-22 18:59:59 in
# New York (UTC-5).
LATE_22ND_UTC_MS = 1_795_391_999_000


@pytest.fixture
def allocator(tmp_path: Path) -> Iterator[SegmentAllocator]:
    with SegmentAllocator(f"sqlite://{tmp_path / 'segments.db'}") as allocator:
        yield allocator


def test_numbers_carry_the_day_and_a_counter_from_1(allocator: SegmentAllocator) -> None:
    clock = ManualClock(LATE_22ND_UTC_MS)
    orders = allocator.order_numbers(clock=clock)
    assert orders.max_counter == 999_999
    first, second = orders.next(), orders.next()
    assert (first.text, first.value, first.counter) == ("20261122000001", 20261122000001, 1)
    assert (str(second), int(second), second.counter) == ("20261122000002", 20261122000002, 2)
    assert first.day == dt.date(2026, 11, 22) and isinstance(first.day, dt.date)
    assert first.key == "orders:20261122"
    assert repr(first) == "OrderNumber('20261122000001', key='orders:20261122')"
    assert first == first and first != second and len({first, first, second}) == 2
    clock.advance_ms(1_000)  # midnight in UTC: a new day's key, from 1 again
    third = orders.next()
    assert (third.text, third.key) == ("20261123000001", "orders:20261123")


def test_the_day_is_the_date_in_the_zone(allocator: SegmentAllocator) -> None:
    clock = ManualClock(LATE_22ND_UTC_MS)
    shanghai = allocator.order_numbers("sh", zone="Asia/Shanghai", width=4, clock=clock)
    new_york = allocator.order_numbers("ny", zone="America/New_York", width=4, clock=clock)
    assert (str(shanghai.next()), shanghai.next().key) == ("202611230001", "sh:20261123")
    assert (str(new_york.next()), new_york.next().day) == ("202611220001", dt.date(2026, 11, 22))


def test_the_system_clock_gives_todays_date_in_the_zone(allocator: SegmentAllocator) -> None:
    # Kiritimati is UTC+14: its date differs from UTC's for 14 hours a day.
    zoneinfo = pytest.importorskip("zoneinfo")
    zone = "Pacific/Kiritimati"
    before = dt.datetime.now(zoneinfo.ZoneInfo(zone)).date()
    number = allocator.order_numbers("kiribati", zone=zone).next()
    after = dt.datetime.now(zoneinfo.ZoneInfo(zone)).date()
    assert number.day in (before, after)
    assert number.text == number.day.strftime("%Y%m%d") + "000001"


def test_width_1_gives_9_numbers_then_the_typed_exhausted_error(
    allocator: SegmentAllocator,
) -> None:
    clock = ManualClock(LATE_22ND_UTC_MS)
    orders = allocator.order_numbers("tiny", width=1, step=4, clock=clock)
    assert orders.max_counter == 9
    assert [str(orders.next()) for _ in range(9)] == [f"20261122{i}" for i in range(1, 10)]
    with pytest.raises(SegmentExhaustedError) as info:
        orders.next()
    assert info.value.kind == "EXHAUSTED" and "tiny:20261122" in str(info.value)
    with pytest.raises(SegmentExhaustedError):
        orders.next()  # still used up: never a wider or wrapped number
    clock.advance_ms(1_000)
    assert str(orders.next()) == "202611231"  # the next day starts again


@pytest.mark.parametrize(
    "settings",
    [
        {"zone": "Mars/Olympus_Mons"},
        {"zone": ""},
        {"width": 0},
        {"width": 11},
        {"width": 2**40},
        {"step": 0},
        {"step": 2**31},
    ],
)
def test_bad_settings_raise_the_typed_config_error(
    allocator: SegmentAllocator, settings: dict[str, object]
) -> None:
    with pytest.raises(SegmentConfigError) as info:
        allocator.order_numbers(**settings)  # type: ignore[arg-type]
    assert isinstance(info.value, ValueError) and info.value.kind == "INVALID_CONFIG"


def test_bad_types_raise_type_error(allocator: SegmentAllocator) -> None:
    for settings in ({"width": True}, {"width": "6"}, {"zone": 8}, {"clock": "system"}):
        with pytest.raises(TypeError):
            allocator.order_numbers(**settings)
    with pytest.raises(OverflowError):
        allocator.order_numbers(width=-1)


def test_threads_share_one_generator_without_repeats(allocator: SegmentAllocator) -> None:
    orders = allocator.order_numbers("busy", step=50, clock=ManualClock(LATE_22ND_UTC_MS))
    got: list[list[int]] = [[] for _ in range(4)]

    def work(slot: list[int]) -> None:
        slot.extend(int(orders.next()) for _ in range(500))

    threads = [threading.Thread(target=work, args=(slot,)) for slot in got]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = sorted(n for slot in got for n in slot)
    assert every == [20261122_000000 + i for i in range(1, 2001)]
    for slot in got:
        assert slot == sorted(slot)


def test_order_numbers_outlive_their_allocator_object(tmp_path: Path) -> None:
    allocator = SegmentAllocator(f"sqlite://{tmp_path / 'segments.db'}")
    orders = allocator.order_numbers(clock=ManualClock(LATE_22ND_UTC_MS))
    del allocator
    assert str(orders.next()) == "20261122000001"
    assert repr(orders) == "<ferroflake.OrderNumbers max_counter=999999>"


def test_order_numbers_of_a_closed_allocator_refuse(tmp_path: Path) -> None:
    with SegmentAllocator(f"sqlite://{tmp_path / 'segments.db'}") as allocator:
        orders = allocator.order_numbers(clock=ManualClock(LATE_22ND_UTC_MS))
        assert orders.next().counter == 1
    with pytest.raises(SegmentClosedError):
        orders.next()
    # Made after the close, they are refused at once, as in every face.
    with pytest.raises(SegmentClosedError):
        allocator.order_numbers()
