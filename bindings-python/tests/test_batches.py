"""The two batch forms: next_ids(n) -> list[int] and next_ids_array(n) -> array('q')."""

from __future__ import annotations

import array
from typing import Any

import pytest

import ferroflake
from ferroflake import Generator, Layout, ManualClock

WIDE = Layout.custom(41, 0, 22, epoch=Layout.twitter().epoch_ms)

# A node id has one live generator per process, and a later one continues after the IDs an
# earlier one issued: each test below takes node ids no other test of this process uses
# (WIDE's only node id, 0, is used here alone).


def test_the_array_form_holds_the_same_increasing_ids_as_the_list_form() -> None:
    gen = Generator(301)
    listed = gen.next_ids(5000)
    arr = gen.next_ids_array(5000)
    assert isinstance(arr, array.array) and arr.typecode == "q" and arr.itemsize == 8
    assert len(arr) == 5000
    every = listed + arr.tolist()
    assert every == sorted(every) and len(set(every)) == len(every)
    assert {gen.decode(i).node for i in arr} == {301}


def test_empty_and_large_batches() -> None:
    gen = Generator(0, WIDE)
    assert gen.next_ids_array(0) == array.array("q")
    big = gen.next_ids_array(1_000_000)  # many chunks, one array
    assert len(big) == 1_000_000 and big[0] < big[-1]
    assert len(set(big)) == len(big)


def test_the_array_form_waits_for_the_next_tick_instead_of_wrapping() -> None:
    clock = ManualClock(1_700_000_000_000)
    gen = Generator(302, Layout.twitter(), clock=clock)
    arr = gen.next_ids_array(3 * 4096)  # three ticks' worth: the manual clock moves on
    assert len(set(arr)) == len(arr) and list(arr) == sorted(arr)
    assert len({gen.decode(i).timestamp_ms for i in arr}) == 3


def test_refusals_in_the_array_form_are_typed() -> None:
    gen = Generator(303)
    gen.set_fence_ms(0)
    with pytest.raises(ferroflake.LeaseExpiredError):
        gen.next_ids_array(10)


@pytest.mark.parametrize("n", ["10", 1.0, True, None, [1]])
def test_wrong_types_raise_type_error(n: Any) -> None:
    with pytest.raises(TypeError):
        Generator(304).next_ids_array(n)


@pytest.mark.parametrize("n", [-1, 2**64])
def test_out_of_range_counts_raise_overflow_error(n: int) -> None:
    with pytest.raises(OverflowError):
        Generator(304).next_ids_array(n)


def test_a_count_beyond_memory_is_a_memory_or_overflow_error() -> None:
    with pytest.raises((MemoryError, OverflowError)):
        Generator(305).next_ids_array(2**62)
