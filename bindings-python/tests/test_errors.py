"""The exception hierarchy, the kind -> class table, and refusal of bad arguments."""

from __future__ import annotations

import datetime as dt
import pickle
from typing import Any, Callable

import pytest

import ferroflake
from ferroflake import (
    ClockMovedBackwardsError,
    ClockStalledError,
    FerroflakeError,
    InvalidInputError,
    LayoutError,
    LeaseExpiredError,
    MaskError,
    MaskKeyError,
    OutOfRangeError,
    ParseError,
    UnknownMaskKeyVersionError,
)
from spec import FORMATS

NOW_MS = 1_700_000_000_000

# The contract: every core ErrorKind, its stable code, and the class it raises.
EXPECTED_TABLE = [
    ("TOO_MANY_BITS", 1, LayoutError),
    ("NO_TIME_BITS", 2, LayoutError),
    ("ZERO_SEQUENCE_BITS", 3, LayoutError),
    ("ZERO_TICK", 4, LayoutError),
    ("EPOCH_BEFORE_UNIX", 5, LayoutError),
    ("EPOCH_IN_FUTURE", 6, LayoutError),
    ("LAYOUT_EXHAUSTED", 7, LayoutError),
    ("NODE_OUT_OF_RANGE", 8, OutOfRangeError),
    ("SHARD_OUT_OF_RANGE", 9, OutOfRangeError),
    ("SEQUENCE_OUT_OF_RANGE", 10, OutOfRangeError),
    ("TIMESTAMP_OUT_OF_RANGE", 11, OutOfRangeError),
    ("ID_OUT_OF_RANGE", 12, OutOfRangeError),
    ("CLOCK_MOVED_BACKWARDS", 13, ClockMovedBackwardsError),
    ("CLOCK_STALLED", 14, ClockStalledError),
    ("LEASE_EXPIRED", 15, LeaseExpiredError),
    ("UNKNOWN_LAYOUT", 16, LayoutError),
    ("PARSE_EMPTY", 17, ParseError),
    ("PARSE_NEGATIVE", 18, ParseError),
    ("PARSE_INVALID_CHARACTER", 19, ParseError),
    ("PARSE_WRONG_LENGTH", 20, ParseError),
    ("PARSE_TOO_LONG", 21, ParseError),
    ("PARSE_OVERFLOW", 22, ParseError),
    ("RESUME_IN_FUTURE", 23, OutOfRangeError),
    ("GENERATOR_FORKED", 24, ferroflake.ForkedGeneratorError),
    ("MASK_WIDTH_OUT_OF_RANGE", 25, MaskError),
    ("MASK_KEY_VERSION_OUT_OF_RANGE", 26, MaskKeyError),
    ("UNKNOWN_MASK_KEY_VERSION", 27, UnknownMaskKeyVersionError),
    ("DUPLICATE_MASK_KEY_VERSION", 28, MaskKeyError),
    ("NODE_IN_USE", 29, ferroflake.NodeInUseError),
]


def test_every_core_error_kind_maps_to_its_class_and_code() -> None:
    assert ferroflake.error_kinds() == EXPECTED_TABLE


def test_value_errors_and_runtime_errors_are_told_apart() -> None:
    for _, _, cls in ferroflake.error_kinds():
        assert issubclass(cls, FerroflakeError)
    for cls in (LayoutError, OutOfRangeError, ParseError, InvalidInputError, MaskError):
        assert issubclass(cls, ValueError)
    for cls in (ClockMovedBackwardsError, ClockStalledError, LeaseExpiredError):
        assert not issubclass(cls, ValueError)
    assert issubclass(ferroflake.ForkedGeneratorError, RuntimeError)
    assert not issubclass(ClockMovedBackwardsError, ClockStalledError)


def kind_of(call: Callable[[], Any], cls: type[FerroflakeError]) -> FerroflakeError:
    with pytest.raises(cls) as info:
        call()
    err = info.value
    code = {name: code for name, code, _ in EXPECTED_TABLE}[err.kind]
    assert err.code == code
    assert str(err), "a core message"
    return err


def test_a_clock_far_behind_raises_clock_moved_backwards_with_the_distance() -> None:
    clock = ferroflake.ManualClock(NOW_MS)
    gen = ferroflake.Generator(101, clock=clock)
    first = gen.next_id()
    clock.rewind_ms(3_600_000)
    err = kind_of(gen.next_id, ClockMovedBackwardsError)
    assert err.kind == "CLOCK_MOVED_BACKWARDS"
    assert err.behind_ms == 3_600_000  # type: ignore[attr-defined]
    assert not isinstance(err, ValueError)
    clock.advance_ms(3_600_001)
    assert gen.next_id() > first


def test_a_fence_raises_lease_expired_until_cleared() -> None:
    clock = ferroflake.ManualClock(NOW_MS)
    gen = ferroflake.Generator(102, clock=clock)
    gen.set_fence_ms(NOW_MS)
    assert gen.fence_ms == NOW_MS
    err = kind_of(gen.next_id, LeaseExpiredError)
    assert err.kind == "LEASE_EXPIRED" and err.fence_ms == NOW_MS  # type: ignore[attr-defined]
    gen.clear_fence()
    assert gen.fence_ms is None
    assert gen.decode(gen.next_id()).timestamp_ms == NOW_MS


def test_a_used_up_layout_raises_layout_exhausted_at_issue_time() -> None:
    layout = ferroflake.Layout.custom(4, 7, 1, epoch=NOW_MS)  # 16 ticks of 1 ms
    clock = ferroflake.ManualClock(NOW_MS)
    gen = ferroflake.Generator(103, layout, clock=clock)
    gen.next_id()
    clock.set_ms(layout.exhausts_at_ms)
    assert kind_of(gen.next_id, LayoutError).kind == "LAYOUT_EXHAUSTED"


def test_other_reachable_kinds_raise_their_class() -> None:
    assert kind_of(lambda: ferroflake.Layout.from_name("snowflake"), LayoutError).kind == (
        "UNKNOWN_LAYOUT"
    )
    gen = ferroflake.Generator(51, ferroflake.Layout.sharded())
    assert kind_of(lambda: gen.next_id_for_shard(16), OutOfRangeError).kind == (
        "SHARD_OUT_OF_RANGE"
    )
    plain = ferroflake.Generator(105)
    assert kind_of(lambda: plain.next_id_for_shard(1), OutOfRangeError).kind == (
        "SHARD_OUT_OF_RANGE"
    )
    assert kind_of(lambda: ferroflake.Layout.twitter_node(32, 0), OutOfRangeError).kind == (
        "NODE_OUT_OF_RANGE"
    )
    assert kind_of(lambda: plain.decode(2**63), OutOfRangeError).kind == "ID_OUT_OF_RANGE"


def test_encode_refuses_what_parse_refuses() -> None:
    """encode and parse share one domain, 0 to 2**63 - 1, in every format."""
    for fmt in FORMATS:
        assert ferroflake.parse(ferroflake.encode(2**63 - 1, fmt), fmt) == 2**63 - 1
        for value in (2**63, 2**64 - 1):
            err = kind_of(lambda: ferroflake.encode(value, fmt), ParseError)
            assert err.kind == "PARSE_OVERFLOW", (fmt, value)
    with pytest.raises(OverflowError):
        ferroflake.encode(2**64)


def test_a_resume_point_ahead_of_the_clock_is_refused_when_the_generator_is_made() -> None:
    clock = ferroflake.ManualClock(NOW_MS)
    err = kind_of(
        lambda: ferroflake.Generator(106, clock=clock, resume_after_ms=NOW_MS + 60_000),
        OutOfRangeError,
    )
    assert err.kind == "RESUME_IN_FUTURE" and isinstance(err, ValueError)
    assert "60000 ms ahead" in str(err)
    err = kind_of(
        lambda: ferroflake.Generator(
            1, clock=clock, resume_after_ms=2**64 - 1, max_backward_wait_ms=2**64 - 1
        ),
        LayoutError,
    )
    assert err.kind == "LAYOUT_EXHAUSTED"


def test_errors_can_be_caught_as_value_error() -> None:
    with pytest.raises(ValueError):
        ferroflake.Generator(1024)
    with pytest.raises(ValueError):
        ferroflake.parse("nope")


# Node ids: each test of this process takes its own, since a node id has one live generator
# per process and a later one continues after the IDs an earlier one issued.
gen = ferroflake.Generator(107)
layout = ferroflake.Layout.twitter()


@pytest.mark.parametrize(
    "call",
    [
        lambda: ferroflake.Generator(True),
        lambda: ferroflake.Generator(1.0),
        lambda: ferroflake.Generator("1"),
        lambda: ferroflake.Generator(None),
        lambda: ferroflake.Generator(1, "twitter"),
        lambda: ferroflake.Generator(1, clock=3),
        lambda: ferroflake.Generator(1, max_drift_ticks=False),
        lambda: ferroflake.Generator(1, resume_after_ms=1.5),
        lambda: gen.next_ids(True),
        lambda: gen.next_ids(2.0),
        lambda: gen.next_id_for_shard(False),
        lambda: gen.decode(True),
        lambda: gen.decode("1"),
        lambda: layout.decode(None),
        lambda: layout.compose(True),
        lambda: ferroflake.Layout.custom(41, 10, True),
        lambda: ferroflake.Layout.custom(41, 10, 12, epoch="2020-01-01"),
        lambda: ferroflake.Layout.custom(41, 10, 12, epoch=True),
        lambda: ferroflake.Layout.custom(41, 10, 12, epoch=dt.date(2020, 1, 1)),
        lambda: ferroflake.encode(True),
        lambda: ferroflake.encode("1"),
        lambda: ferroflake.parse(b"1"),
        lambda: ferroflake.parse(1),
        lambda: ferroflake.ManualClock(True),
        lambda: ferroflake.ManualClock(1.0),
        lambda: pickle.dumps(gen),
    ],
)
def test_wrong_types_raise_type_error(call: Callable[[], Any]) -> None:
    with pytest.raises(TypeError):
        call()


@pytest.mark.parametrize(
    "call",
    [
        lambda: ferroflake.Generator(-1),
        lambda: ferroflake.Generator(2**64),
        lambda: ferroflake.Generator(1024),
        lambda: ferroflake.Generator(1, max_backward_wait_ms=-5),
        lambda: ferroflake.Generator(1, clock="monotonic"),
        lambda: gen.next_ids(-1),
        lambda: gen.next_id_for_shard(-1),
        lambda: gen.decode(-1),
        lambda: gen.decode(2**64),
        lambda: layout.compose(-1),
        lambda: layout.compose(ferroflake.Layout.twitter().epoch_ms, node=2**70),
        lambda: ferroflake.Layout.custom(-41, 10, 12),
        lambda: ferroflake.Layout.custom(2**40, 10, 12),
        lambda: ferroflake.Layout.custom(41, 10, 12, epoch=2**63),
        lambda: ferroflake.Layout.custom(41, 10, 12, order="time_first"),
        lambda: ferroflake.Layout.custom(41, 10, 12, epoch=dt.datetime(2020, 1, 1)),
        lambda: ferroflake.encode(-1),
        lambda: ferroflake.encode(1, "hex"),
        lambda: ferroflake.parse("1", "hex"),
        lambda: ferroflake.parse("١٢٣"),  # Arabic-Indic digits are not ASCII digits
        lambda: ferroflake.ManualClock(-1),
    ],
)
def test_bad_values_raise_value_or_overflow_error(call: Callable[[], Any]) -> None:
    with pytest.raises((ValueError, OverflowError)):
        call()


def test_naive_datetime_is_refused_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="naive datetime"):
        ferroflake.Layout.custom(41, 10, 12, epoch=dt.datetime(2020, 1, 1))


STRANGE_VALUES: list[Any] = [
    None, True, -1, 0, 2**63 - 1, 2**63, 2**64, 2**200, -(2**200), 1.5, float("nan"),
    "", "0", "zzzzzzzzzzz", "\x00", "é" * 20, b"1", [], {}, object(), dt.datetime.now(),
    dt.datetime.now(dt.timezone.utc), dt.datetime.max.replace(tzinfo=dt.timezone.utc),
    dt.datetime.min.replace(tzinfo=dt.timezone.utc), ferroflake.ManualClock(0),
]


def test_no_input_crashes_the_interpreter() -> None:
    """Every public call with every strange value returns or raises an ordinary error."""
    ordinary = (TypeError, ValueError, OverflowError, FerroflakeError)
    clock = ferroflake.ManualClock(NOW_MS)
    target = ferroflake.Generator(52, ferroflake.Layout.sharded(), clock=clock)
    calls: list[Callable[[Any], Any]] = [
        lambda v: ferroflake.Generator(v, clock=clock),
        lambda v: ferroflake.Generator(109, v, clock=clock),
        lambda v: ferroflake.Generator(109, clock=v),
        lambda v: ferroflake.Generator(109, clock=clock, max_drift_ticks=v),
        lambda v: ferroflake.Generator(109, clock=clock, max_backward_wait_ms=v),
        lambda v: ferroflake.Generator(109, clock=clock, resume_after_ms=v),
        lambda v: target.next_ids(v) if not isinstance(v, int) or v < 10_000 else None,
        target.next_id_for_shard,
        target.decode,
        target.set_fence_ms,
        lambda v: ferroflake.Layout(v, 10, 12),
        lambda v: ferroflake.Layout(41, 10, 12, epoch=v),
        lambda v: ferroflake.Layout(41, 10, 12, tick_ms=v),
        lambda v: ferroflake.Layout(41, 10, 12, order=v),
        lambda v: ferroflake.Layout.from_name(v),
        lambda v: ferroflake.Layout.sharded().compose(v),
        lambda v: ferroflake.Layout.js53().decode(v),
        lambda v: ferroflake.Parts(v).datetime,
        ferroflake.encode,
        lambda v: ferroflake.encode(1, v),
        ferroflake.parse,
        lambda v: ferroflake.parse("1", v),
        ferroflake.ManualClock,
        clock.advance_ms,
    ]
    for call in calls:
        for value in STRANGE_VALUES:
            clock.set_ms(NOW_MS)
            try:
                call(value)
            except ordinary:
                pass
    target.clear_fence()
    assert target.next_id() > 0


def test_lease_and_segment_errors_sit_under_their_own_bases() -> None:
    lease = [
        ferroflake.LeaseExpiredError,
        ferroflake.RegistryUnavailableError,
        ferroflake.NoFreeNodeError,
        ferroflake.LeaseLostError,
        ferroflake.BehindHighWaterError,
        ferroflake.StartWaitTooLongError,
        ferroflake.ClockSkewError,
        ferroflake.StateFileError,
        ferroflake.RegistryAddressError,
        ferroflake.LeaseConfigError,
        ferroflake.RegistryError,
        ferroflake.LeaseClosedError,
    ]
    segment = [
        ferroflake.StoreUnavailableError,
        ferroflake.UnknownKeyError,
        ferroflake.KeyExistsError,
        ferroflake.InvalidKeyError,
        ferroflake.SegmentConfigError,
        ferroflake.SegmentExhaustedError,
        ferroflake.SegmentNotReadyError,
        ferroflake.SegmentClosedError,
        ferroflake.SegmentRewoundError,
        ferroflake.SegmentStoreError,
    ]
    for cls in lease:
        assert issubclass(cls, ferroflake.LeaseError) and not issubclass(cls, ferroflake.SegmentError)
    for cls in segment:
        assert issubclass(cls, ferroflake.SegmentError) and not issubclass(cls, ferroflake.LeaseError)
    # Bad input is also a ValueError, as the lease and segment crates decide it; a store
    # or registry that is down is not.
    for table, classes in (
        (ferroflake.lease_error_kinds(), [*lease, ferroflake.LeaseError]),
        (ferroflake.segment_error_kinds(), [*segment, ferroflake.ForkedGeneratorError]),
    ):
        for name, cls, callers in table:
            assert issubclass(cls, ValueError) == callers, name
            assert cls in classes, name
    assert [n for n, _, c in ferroflake.segment_error_kinds() if c] == [
        "INVALID_KEY", "INVALID_CONFIG", "NOT_BUILT"]
    assert [n for n, _, c in ferroflake.lease_error_kinds() if c] == [
        "BAD_ADDRESS", "NOT_BUILT", "INVALID_CONFIG"]
    for cls in (ferroflake.RegistryAddressError, ferroflake.LeaseConfigError,
                ferroflake.InvalidKeyError, ferroflake.SegmentConfigError):
        assert issubclass(cls, ValueError)
    for cls in (ferroflake.RegistryUnavailableError, ferroflake.StoreUnavailableError,
                ferroflake.LeaseLostError, ferroflake.LeaseExpiredError):
        assert not issubclass(cls, ValueError)
    assert issubclass(ferroflake.UnknownKeyError, LookupError)
