"""SegmentAllocator and SegmentKey: dense per-key IDs from a table (a SQLite file here),
close and give-back, processes and threads on one key, fork, bad input."""

from __future__ import annotations

import array
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import ferroflake
from ferroflake import (
    ForkedGeneratorError,
    InvalidKeyError,
    KeyExistsError,
    SegmentAllocator,
    SegmentClosedError,
    SegmentConfigError,
    SegmentError,
    SegmentRewoundError,
    StoreUnavailableError,
    UnknownKeyError,
)

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="segments are Unix-only"),
    # The fork tests fork on purpose while the lease's or the allocator's thread runs.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]


@pytest.fixture
def store(tmp_path: Path) -> str:
    return f"sqlite://{tmp_path / 'segments.db'}"


def test_keys_issue_dense_increasing_ids_and_close_gives_the_rest_back(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        assert allocator.store == f"the SQLite file {store.removeprefix('sqlite://')}"
        allocator.create_key("orders", start=1, step=100)
        orders = allocator.key("orders")
        assert orders.name == "orders"
        first = orders.next_id()
        batch = orders.next_ids(150)  # spans two ranges
        arr = orders.next_ids_array(10)
        assert isinstance(arr, array.array) and arr.typecode == "q"
        assert orders.try_next_id() == 162
        assert [first, *batch, *arr] == list(range(1, 162))
        status = orders.status()
        assert status.key == "orders" and status.step >= 100 and status.fetches >= 2
        assert status.current[0] <= 163 <= status.current[1]
        assert [s.key for s in allocator.status()] == ["orders"]
    # Closed: the keys refuse, and the unissued rest went back to the table.
    with pytest.raises(SegmentClosedError) as closed:
        orders.next_id()
    assert closed.value.kind == "CLOSED" and isinstance(closed.value, SegmentError)
    # So are opening a key, even one open before, and creating one, as in every face.
    with pytest.raises(SegmentClosedError):
        allocator.key("orders")
    with pytest.raises(SegmentClosedError):
        allocator.create_key("late", start=1, step=10)
    allocator.close()  # idempotent
    with SegmentAllocator(store) as again:
        assert again.key("orders").next_id() == 163
        with pytest.raises(UnknownKeyError):
            again.key("late")  # never written


def test_create_key_without_start_or_step_takes_the_segment_crates_defaults(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        allocator.create_key("plain")
        plain = allocator.key("plain")
        assert plain.next_id() == 1 and plain.status().step == 1000


def test_a_deleted_table_file_is_caught_by_this_hosts_record(store: str, tmp_path: Path) -> None:
    # Made again at 1, the key would repeat every ID the lost file issued: this host's
    # record of where its ranges ended refuses that.
    with SegmentAllocator(store) as allocator:
        allocator.create_key("lost", start=1, step=10)
        assert allocator.key("lost").next_ids(15) == list(range(1, 16))
    for side in ("", "-wal", "-shm"):
        (tmp_path / f"segments.db{side}").unlink(missing_ok=True)
    with SegmentAllocator(store) as again:
        with pytest.raises(SegmentRewoundError) as rewound:
            again.create_key("lost", start=1, step=10)
    assert rewound.value.kind == "REWOUND" and "lost" in str(rewound.value)


def test_create_key_refuses_an_existing_key_unless_exist_ok(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        allocator.create_key("k")
        with pytest.raises(KeyExistsError) as exists:
            allocator.create_key("k", 5, 10)
        assert exists.value.kind == "KEY_EXISTS"
        allocator.create_key("k", 5, 10, exist_ok=True)
        assert allocator.key("k").next_id() == 1  # the first creation's start stands


def test_unknown_and_invalid_keys(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        with pytest.raises(UnknownKeyError) as unknown:
            allocator.key("missing")
        assert unknown.value.kind == "UNKNOWN_KEY" and isinstance(unknown.value, LookupError)
        for bad in ["", "x" * 129]:
            with pytest.raises(InvalidKeyError):
                allocator.key(bad)
            with pytest.raises(InvalidKeyError):
                allocator.create_key(bad)
        with pytest.raises(SegmentConfigError):
            allocator.create_key("zero-step", 1, 0)
        with pytest.raises(SegmentError) as negative:
            allocator.create_key("negative", -1, 10)
        assert isinstance(negative.value, ValueError)


def test_js_keys_stop_at_2_53(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        allocator.create_key("js", start=2**53 - 3, step=10)
        js = allocator.key("js", js=True)
        assert js.next_ids(2) == [2**53 - 3, 2**53 - 2]
        assert js.next_id() == 2**53 - 1
        with pytest.raises(ferroflake.SegmentExhaustedError):
            js.next_id()


def test_threads_on_one_key_never_repeat(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        allocator.create_key("t", 1, 10)  # a small step: many range switches under the race
        key = allocator.key("t")
        results: list[list[int]] = [[] for _ in range(8)]

        def work(slot: list[int]) -> None:
            for i in range(5000):
                slot.append(key.next_id())
                if i % 500 == 0:
                    slot.extend(key.next_ids_array(37))

        threads = [threading.Thread(target=work, args=(slot,)) for slot in results]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    every = [i for slot in results for i in slot]
    assert len(set(every)) == len(every) == 8 * (5000 + 10 * 37)
    assert all(slot == sorted(slot) for slot in results)


TAKER = r"""
import sys, ferroflake
with ferroflake.SegmentAllocator(sys.argv[1], max_wait_ms=10_000) as allocator:
    key = allocator.key("shared")
    ids = key.next_ids_array(20_000)
    ids.extend(key.next_id() for _ in range(20_000))
    sys.stdout.buffer.write(ids.tobytes())
"""


def test_two_processes_on_one_key_never_repeat(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        allocator.create_key("shared", 1, 50)
    procs = [
        subprocess.Popen([sys.executable, "-c", TAKER, store], stdout=subprocess.PIPE) for _ in range(2)
    ]
    every: list[int] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        ids = array.array("q")
        ids.frombytes(out)
        assert len(ids) == 40_000 and list(ids) == sorted(ids)
        every.extend(ids)
    assert len(set(every)) == len(every) == 80_000


def child_uses(key: ferroflake.SegmentKey, allocator: SegmentAllocator) -> str:
    """What an inherited key does in this (forked) process."""
    answers = []
    calls = (
        key.next_id,
        key.try_next_id,
        lambda: key.next_ids(3),
        lambda: key.next_ids_array(3),
        key.status,
        lambda: allocator.key("f"),
        lambda: allocator.create_key("g"),
        allocator.status,
    )
    for call in calls:
        try:
            call()
            answers.append("issued")
        except ForkedGeneratorError as err:
            answers.append(err.kind)
    allocator.close()  # must give nothing back: the rest in memory is the parent's
    return " ".join(answers)


def assert_child_gave_nothing_back(store: str, key: ferroflake.SegmentKey) -> None:
    """Had the child given the parent's unissued rest back, a new allocator would take
    IDs the parent is still issuing."""
    with SegmentAllocator(store) as other:
        theirs = other.key("f").next_ids(500)
    ours = key.next_ids(500)
    assert set(ours).isdisjoint(theirs)


def test_os_fork_child_is_refused_and_gives_nothing_back(store: str) -> None:
    allocator = SegmentAllocator(store)
    allocator.create_key("f", 1, 1000)
    key = allocator.key("f")
    key.next_ids(10)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, child_uses(key, allocator).encode())
            del key, allocator  # dropping the copies in the child must not hang
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        report = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report == " ".join(["GENERATOR_FORKED"] * 8), report
    assert_child_gave_nothing_back(store, key)
    allocator.close()


def report_into(key: ferroflake.SegmentKey, allocator: SegmentAllocator, queue: Any) -> None:
    queue.put(child_uses(key, allocator))


def test_multiprocessing_fork_child_is_refused_and_gives_nothing_back(store: str) -> None:
    ctx = multiprocessing.get_context("fork")
    allocator = SegmentAllocator(store)
    allocator.create_key("f", 1, 1000)
    key = allocator.key("f")
    key.next_ids(10)
    queue = ctx.Queue()
    process = ctx.Process(target=report_into, args=(key, allocator, queue))
    process.start()
    report = queue.get(timeout=60)
    process.join(timeout=60)
    assert process.exitcode == 0
    assert report == " ".join(["GENERATOR_FORKED"] * 8), report
    assert_child_gave_nothing_back(store, key)
    allocator.close()


FORK_THEN_EXIT = r"""
import os, sys, ferroflake
allocator = ferroflake.SegmentAllocator(sys.argv[1])
allocator.create_key("x", 1, 1000)
key = allocator.key("x")
key.next_id()
pid = os.fork()
if pid == 0:
    sys.exit(0)  # a normal exit with the inherited allocator open: no give-back, no hang
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status), key.next_id())
"""


def test_a_forked_child_that_exits_normally_does_not_hang(store: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", FORK_THEN_EXIT, store], timeout=60, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "2"], done.stdout + done.stderr


def test_an_allocator_left_open_gives_back_at_exit(store: str) -> None:
    script = (
        "import ferroflake, sys\n"
        "allocator = ferroflake.SegmentAllocator(sys.argv[1])\n"
        "allocator.create_key('exit', 1, 1000)\n"
        "print(allocator.key('exit').next_ids(5)[-1])\n"
    )
    done = subprocess.run([sys.executable, "-c", script, store], timeout=60, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["5"]
    with SegmentAllocator(store) as after:
        assert after.key("exit").next_id() == 6


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda s: SegmentAllocator(7),
        lambda s: SegmentAllocator(b"/tmp/x.db"),
        lambda s: SegmentAllocator(s, max_wait_ms="1"),
        lambda s: SegmentAllocator(s, max_wait_ms=True),
        lambda s: SegmentAllocator(s, prefetch_share="half"),
        lambda s: SegmentAllocator(s).key(5),
        lambda s: SegmentAllocator(s).create_key("k", start="1"),
        lambda s: SegmentAllocator(s).create_key("k", step=1.5),
        lambda s: SegmentAllocator(s).create_key("k", start=True),
    ],
)
def test_wrong_types_raise_type_error(store: str, call: Any) -> None:
    with pytest.raises(TypeError):
        call(store)


def test_wrong_types_and_values_on_a_key(store: str) -> None:
    with SegmentAllocator(store) as allocator:
        allocator.create_key("k")
        key = allocator.key("k")
        for n in ("3", 2.0, True, None):
            with pytest.raises(TypeError):
                key.next_ids(n)  # type: ignore[arg-type]
            with pytest.raises(TypeError):
                key.next_ids_array(n)  # type: ignore[arg-type]
        for n in (-1, 2**64):
            with pytest.raises(OverflowError):
                key.next_ids(n)
        with pytest.raises(SegmentConfigError):
            key.next_ids(2**40)  # above the largest batch (2**32): refused before issuing
        assert key.next_ids(0) == [] and len(key.next_ids_array(0)) == 0


@pytest.mark.parametrize(
    "kwargs",
    [{"prefetch_share": 0.0}, {"prefetch_share": 1.5}, {"max_step": 0}, {"prefetch_share": float("nan")}],
)
def test_settings_that_cannot_work_are_refused(store: str, kwargs: dict[str, Any]) -> None:
    with pytest.raises(SegmentConfigError):
        SegmentAllocator(store, **kwargs)


@pytest.mark.parametrize(
    "address", ["relative.db", "ftp://x/y", "sqlite://relative.db", "sqlite:///tmp/s.db?mode=ro", ""]
)
def test_malformed_store_addresses_are_refused(address: str) -> None:
    with pytest.raises(SegmentConfigError) as refused:
        SegmentAllocator(address)
    assert refused.value.kind == "INVALID_CONFIG" and isinstance(refused.value, ValueError)


def test_a_relative_store_path_is_refused_with_the_file_it_would_name() -> None:
    with pytest.raises(SegmentConfigError) as refused:
        SegmentAllocator("relative.db")
    message = str(refused.value)
    assert "different file in each working directory" in message, message
    assert os.path.join(os.getcwd(), "relative.db") in message, message


@pytest.mark.parametrize(
    "address", ["redis://127.0.0.1:1", "postgres://u@127.0.0.1:1/db", "mysql://u@127.0.0.1:1/db"]
)
def test_unreachable_stores_are_a_typed_error_within_seconds(address: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as refused:
        SegmentAllocator(address)
    assert refused.value.kind == "UNAVAILABLE"
    assert time.monotonic() - started < 10


def test_a_path_like_store_is_accepted(tmp_path: Path) -> None:
    with SegmentAllocator(tmp_path / "plain.db") as allocator:
        allocator.create_key("p", 10, 5)
        assert allocator.key("p").next_ids(3) == [10, 11, 12]
        assert "sqlite" in repr(allocator) and "p" in repr(allocator.key("p"))


def test_a_hard_link_to_an_open_table_is_refused(tmp_path: Path) -> None:
    # SQLite keeps its write-ahead log beside each name: two names open at once would issue
    # the same IDs. A symbolic link is the same name.
    first, link, symlink = tmp_path / "ids.db", tmp_path / "alias.db", tmp_path / "link.db"
    allocator = SegmentAllocator(first)
    allocator.create_key("p", 1, 10)
    os.link(first, link)
    os.symlink(first, symlink)
    with pytest.raises(StoreUnavailableError, match="under another name"):
        SegmentAllocator(link)
    taken = allocator.key("p").next_ids(3)
    with SegmentAllocator(symlink) as same:
        taken += same.key("p").next_ids(3)
    del same
    # The store stays open while the allocator object lives (closed or not).
    allocator.close()
    del allocator
    with SegmentAllocator(link) as again:
        taken += again.key("p").next_ids(3)
    assert len(set(taken)) == 9, taken
