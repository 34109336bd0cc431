"""LeasedGenerator: a node id leased from a registry, fenced, released on close; refusals
across fork; several processes on one embedded registry; a holder stopped past its TTL."""

from __future__ import annotations

import array
import json
import logging
import multiprocessing
import os
import re
import signal
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
    Layout,
    LeaseClosedError,
    LeaseConfigError,
    LeasedGenerator,
    LeaseError,
    LeaseExpiredError,
    NoFreeNodeError,
    RegistryAddressError,
    RegistryUnavailableError,
    StartWaitTooLongError,
)

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="leases are Unix-only"),
    # The fork tests fork on purpose while the lease's or the allocator's thread runs.
    pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning"),
]

# One node id only: a second live holder is refused, and a takeover gets the same id.
ONE_NODE = Layout.custom(41, 0, 12, epoch=Layout.twitter().epoch_ms)
# Short leases, so the tests can wait them out. Every holder of a registry uses the same
# max_ttl_ms, which also sizes the wait of the first claims on a new registry (1.2 s).
FAST = {"ttl_ms": 1000, "max_ttl_ms": 1000}


@pytest.fixture
def registry(tmp_path: Path) -> str:
    return str(tmp_path / "registry")


def test_issues_under_its_node_id_and_releases_on_close(registry: str) -> None:
    gen = LeasedGenerator(ONE_NODE, registry, **FAST)
    assert gen.status == "held" and not gen.closed
    assert gen.node_id == 0 and gen.registry.endswith(registry) and gen.ttl_ms == 1000
    a = gen.next_id()
    batch = gen.next_ids(100)
    arr = gen.next_ids_array(100)
    assert isinstance(arr, array.array) and arr.typecode == "q"
    every = [a, *batch, *arr]
    assert every == sorted(every) and len(set(every)) == len(every)
    assert gen.decode(a).node == 0 and gen.layout == ONE_NODE
    assert gen.fence_ms is not None and gen.reserved_high_water_ms >= gen.last_issued_ms
    with pytest.raises(NoFreeNodeError) as refused:  # the only node id is held
        LeasedGenerator(ONE_NODE, registry, **FAST)
    assert refused.value.kind == "NO_FREE_NODE" and isinstance(refused.value, LeaseError)
    gen.close()
    gen.close()  # idempotent
    assert gen.closed and gen.status == "released" and gen.fence_ms is None
    with pytest.raises(LeaseClosedError) as closed:
        gen.next_id()
    assert closed.value.kind == "CLOSED"
    with pytest.raises(LeaseClosedError):
        gen.next_ids_array(3)
    # Released with its final mark: the next holder takes the id at once (a claim held
    # until its TTL would be refused with NoFreeNodeError), and issues above every ID.
    with LeasedGenerator(ONE_NODE, registry, **FAST) as after:
        assert after.node_id == 0 and after.next_id() > max(every)
    assert after.closed


def test_the_with_statement_releases_even_when_the_body_raises(registry: str) -> None:
    with pytest.raises(KeyError):
        with LeasedGenerator(ONE_NODE, registry, **FAST) as gen:
            gen.next_id()
            raise KeyError("boom")
    assert gen.closed
    with LeasedGenerator(ONE_NODE, registry, **FAST) as again:  # the id is free again
        again.next_id()


def test_threads_share_one_leased_generator_and_close_stops_them_all(registry: str) -> None:
    gen = LeasedGenerator(ferroflake.Layout.twitter(), registry, **FAST)
    results: list[list[int]] = [[] for _ in range(8)]
    refusals: list[BaseException] = []
    start = threading.Barrier(9)

    def work(slot: list[int]) -> None:
        start.wait()
        try:
            for i in range(10_000_000):  # until close() stops it
                slot.append(gen.next_id())
                if i % 1000 == 0:
                    slot.extend(gen.next_ids(50))
        except BaseException as err:  # noqa: BLE001 - every refusal is recorded and checked
            refusals.append(err)

    threads = [threading.Thread(target=work, args=(slot,)) for slot in results]
    for t in threads:
        t.start()
    start.wait()
    # Close while the threads issue: once each has issued and 1,000 are out (a refusal or
    # the deadline ends the wait too, and the checks below fail).
    deadline = time.monotonic() + 30
    while not (all(results) and sum(map(len, results)) > 1000):
        if refusals or time.monotonic() > deadline:
            break
        time.sleep(0.001)
    gen.close()  # while the threads issue
    for t in threads:
        t.join()
    every = [i for slot in results for i in slot]
    assert len(set(every)) == len(every)
    assert all(slot == sorted(slot) for slot in results)
    assert len(refusals) == 8 and all(isinstance(e, LeaseClosedError) for e in refusals), refusals
    assert len(every) > 1000
    with pytest.raises(LeaseClosedError):
        gen.next_id()


def test_renewal_keeps_issuing_past_several_ttls(registry: str) -> None:
    gen = LeasedGenerator(ONE_NODE, registry, **FAST)
    first_fence = gen.fence_ms
    assert first_fence is not None
    # Renewed every ttl/3 on the lease's own thread, without the GIL: wait until a renewal
    # has moved the fence two TTLs past the first one (one made over two TTLs later).
    deadline = time.monotonic() + 30
    while (gen.fence_ms or 0) < first_fence + 2 * gen.ttl_ms:
        assert time.monotonic() < deadline, (first_fence, gen.fence_ms, gen.status)
        time.sleep(0.01)
    assert gen.status == "held" and gen.next_id() > 0
    assert gen.fence_ms is not None and gen.fence_ms > first_fence
    gen.close()


# --- fork ---------------------------------------------------------------------------


def child_uses(gen: LeasedGenerator) -> str:
    """What an inherited leased generator does in this (forked) process, as one line."""
    try:
        gen.next_id()
        return "issued"
    except ForkedGeneratorError as err:
        refusal = f"refused {err.kind}"
    try:
        gen.next_ids_array(5)
        return "issued a batch"
    except ForkedGeneratorError:
        pass
    status = gen.status
    gen.close()  # must release nothing: the lease is the parent's
    return f"{refusal} {status}"


def assert_parent_still_holds(gen: LeasedGenerator, registry: str, before: int) -> None:
    """The child released nothing: renewals go on past two TTLs, the parent keeps
    issuing, and the only node id is still taken."""
    time.sleep(2.2)
    assert gen.status == "held"
    assert gen.next_id() > before
    with pytest.raises(NoFreeNodeError):
        LeasedGenerator(ONE_NODE, registry, **FAST)


def test_a_start_that_waits_says_why_in_the_ferroflake_log(
    registry: str, caplog: pytest.LogCaptureFixture
) -> None:
    # A new registry: the first claim waits max_ttl + quarantine (1.2 s) before issuing.
    with caplog.at_level(logging.WARNING, logger="ferroflake"):
        with LeasedGenerator(ONE_NODE, registry, **FAST) as gen:
            gen.next_id()
    said = [r.getMessage() for r in caplog.records if r.name == "ferroflake"]
    assert any("node id 0" in m and "waiting 1s" in m for m in said), said


def test_settings_left_out_take_the_lease_crates_defaults(tmp_path: Path) -> None:
    # A new registry's floor is max_ttl plus the quarantine: 10 s + 2 s by default, and
    # 20 s + 4 s for a 20 s ttl_ms alone (the longest TTL and the quarantine follow it), as
    # in every face.
    for ttl_ms, floor_s in ((None, 12), (20_000, 24)):
        with pytest.raises(StartWaitTooLongError) as refused:
            LeasedGenerator(ONE_NODE, str(tmp_path / str(floor_s)), ttl_ms=ttl_ms, max_start_wait_ms=1)
        waited = re.search(r"must wait (\d+)s", str(refused.value))
        assert waited and floor_s - 1 <= int(waited.group(1)) <= floor_s, str(refused.value)


def test_a_floor_longer_than_max_start_wait_is_refused_at_once_and_gives_the_id_back(
    registry: str,
) -> None:
    # A new registry's floor is max_ttl_ms plus the quarantine: 20.2 s, against 100 ms.
    settings = {"ttl_ms": 1000, "max_ttl_ms": 20_000, "max_start_wait_ms": 100}
    for attempt in ("first", "second"):  # the second claims the one node id again
        started = time.monotonic()
        with pytest.raises(StartWaitTooLongError) as refused:
            LeasedGenerator(ONE_NODE, registry, **settings)
        assert time.monotonic() - started < 10, f"{attempt}: refused before the floor"
        error = refused.value
        assert error.kind == "START_WAIT_TOO_LONG" and isinstance(error, LeaseError)
        assert "node id 0" in str(error) and "max_start_wait 100ms" in str(error), attempt


def test_os_fork_child_is_refused_and_never_releases_the_parents_lease(registry: str) -> None:
    gen = LeasedGenerator(ONE_NODE, registry, **FAST)
    before = gen.next_id()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write_end, child_uses(gen).encode())
            del gen  # dropping the copy releases nothing either
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        report = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report == "refused GENERATOR_FORKED forked", report
    assert_parent_still_holds(gen, registry, before)
    gen.close()


FORK_THEN_EXIT = r"""
import os, sys, time, ferroflake
layout = ferroflake.Layout.custom(41, 0, 12, epoch=ferroflake.Layout.twitter().epoch_ms)
gen = ferroflake.LeasedGenerator(layout, sys.argv[1], ttl_ms=1000, max_ttl_ms=1000)
before = gen.next_id()
pid = os.fork()
if pid == 0:
    try:
        gen.next_id()
        sys.exit(3)
    except ferroflake.ForkedGeneratorError:
        sys.exit(0)  # a normal exit: atexit hooks and finalisation, the generator still open
_, status = os.waitpid(pid, 0)
time.sleep(2.2)  # past two TTLs: the parent's renewals must still succeed
print(os.waitstatus_to_exitcode(status), gen.status, gen.next_id() > before, flush=True)
try:
    ferroflake.LeasedGenerator(layout, sys.argv[1], ttl_ms=1000, max_ttl_ms=1000)
    print("taken")
except ferroflake.NoFreeNodeError:
    print("still held")
"""


def test_a_forked_child_that_exits_normally_releases_nothing_and_does_not_hang(
    registry: str,
) -> None:
    # The child runs the interpreter's whole exit (atexit hooks, finalisation) with the
    # inherited generator open: it must neither release the parent's lease nor hang.
    LeasedGenerator(ONE_NODE, registry, **FAST).close()
    done = subprocess.run(
        [sys.executable, "-c", FORK_THEN_EXIT, registry], timeout=60, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["0 held True", "still held"], done.stdout + done.stderr


FORK_WHILE_ISSUING = r"""
import os, sys, threading, ferroflake
layout = ferroflake.Layout.custom(41, 0, 12, epoch=ferroflake.Layout.twitter().epoch_ms)
gen = ferroflake.LeasedGenerator(layout, sys.argv[1], ttl_ms=1000, max_ttl_ms=1000)
stop = threading.Event()

def issue():
    while not stop.is_set():
        gen.next_ids(3 * 4096)  # waits for the next ticks inside the call, without the GIL

thread = threading.Thread(target=issue)
thread.start()
codes = []
for _ in range(20):
    pid = os.fork()
    if pid == 0:
        try:
            gen.next_id()
            os._exit(3)
        except ferroflake.ForkedGeneratorError:
            pass
        gen.close()
        sys.exit(0)  # a normal exit, the inherited generator open
    codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
stop.set()
thread.join()
print(codes.count(0), gen.status, flush=True)
gen.close()
"""


def test_children_forked_while_a_thread_is_inside_a_call_close_and_exit_without_hanging(
    registry: str,
) -> None:
    # At the fork another thread may be inside next_ids (waiting for a tick, the GIL
    # released): the child must not wait for it, neither in close() nor at exit.
    LeasedGenerator(ONE_NODE, registry, **FAST).close()
    done = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", FORK_WHILE_ISSUING, registry],
        timeout=60,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["20", "held"], done.stdout + done.stderr


def report_into(gen: LeasedGenerator, queue: Any) -> None:
    queue.put(child_uses(gen))


def test_multiprocessing_fork_child_is_refused_and_never_releases(registry: str) -> None:
    ctx = multiprocessing.get_context("fork")
    gen = LeasedGenerator(ONE_NODE, registry, **FAST)
    before = gen.next_id()
    queue = ctx.Queue()
    process = ctx.Process(target=report_into, args=(gen, queue))
    process.start()
    report = queue.get(timeout=60)
    process.join(timeout=60)
    assert process.exitcode == 0
    assert report == "refused GENERATOR_FORKED forked", report
    assert_parent_still_holds(gen, registry, before)
    gen.close()


# --- processes on one registry --------------------------------------------------------

HOLDER = r"""
import sys, ferroflake
registry, count = sys.argv[1], int(sys.argv[2])
with ferroflake.LeasedGenerator(ferroflake.Layout.twitter(), registry, ttl_ms=1000, max_ttl_ms=1000) as gen:
    ids = gen.next_ids_array(count // 2)
    ids.extend(gen.next_id() for _ in range(count - count // 2))
    sys.stdout.write(f"{gen.node_id}\n")
    sys.stdout.flush()
    sys.stdout.buffer.write(ids.tobytes())
"""


def test_four_processes_on_one_embedded_registry_never_repeat(registry: str) -> None:
    LeasedGenerator(ONE_NODE, registry, **FAST).close()  # the new registry's first wait, once
    count = 50_000
    procs = [
        subprocess.Popen([sys.executable, "-c", HOLDER, registry, str(count)], stdout=subprocess.PIPE)
        for _ in range(4)
    ]
    nodes = []
    every: list[int] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        head, _, body = out.partition(b"\n")
        nodes.append(int(head))
        ids = array.array("q")
        ids.frombytes(body)
        assert len(ids) == count and list(ids) == sorted(ids)
        assert {Layout.twitter().decode(i).node for i in ids} == {nodes[-1]}
        every.extend(ids)
    assert len(set(nodes)) == 4, nodes
    assert len(set(every)) == len(every) == 4 * count


STOPPABLE = r"""
import sys, ferroflake
layout = ferroflake.Layout.custom(41, 0, 12, epoch=ferroflake.Layout.twitter().epoch_ms)
gen = ferroflake.LeasedGenerator(layout, sys.argv[1], ttl_ms=1000, max_ttl_ms=1000)
print(gen.node_id, flush=True)
for line in sys.stdin:
    try:
        print(" ".join(map(str, gen.next_ids(int(line)))), flush=True)
    except ferroflake.LeaseExpiredError as err:
        print(f"refused {err.kind} {gen.status} {err}", flush=True)
"""


def test_a_holder_stopped_past_its_ttl_is_fenced_and_repeats_nothing(registry: str) -> None:
    LeasedGenerator(ONE_NODE, registry, **FAST).close()  # the new registry's first wait, once
    holder = subprocess.Popen(
        [sys.executable, "-c", STOPPABLE, registry],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "0"
        holder.stdin.write("1000\n")
        holder.stdin.flush()
        first = [int(i) for i in holder.stdout.readline().split()]
        assert len(first) == 1000
        holder.send_signal(signal.SIGSTOP)
        time.sleep(2.0)  # past the TTL (1 s) and the quarantine (0.2 s)
        # Another holder takes the same node id meanwhile and issues under it.
        with LeasedGenerator(ONE_NODE, registry, **FAST) as taker:
            assert taker.node_id == 0
            taken = taker.next_ids(1000)
            holder.send_signal(signal.SIGCONT)
            holder.stdin.write("1000\n")
            holder.stdin.flush()
            answer = holder.stdout.readline()
            taken += taker.next_ids(1000)
        assert answer.startswith("refused LEASE_EXPIRED "), answer
        assert set(first).isdisjoint(taken)
        assert max(first) < min(taken)
    finally:
        holder.send_signal(signal.SIGCONT)
        holder.stdin.close()
        holder.wait(timeout=30)


STATEFUL = r"""
import sys, ferroflake
layout = ferroflake.Layout.custom(41, 0, 12, epoch=ferroflake.Layout.twitter().epoch_ms)
gen = ferroflake.LeasedGenerator(layout, sys.argv[1], ttl_ms=1000, max_ttl_ms=1000, state_file=sys.argv[2])
print(gen.node_id, gen.next_id(), flush=True)
sys.stdin.read()
"""


def test_a_state_file_has_one_live_process_and_resumes_a_killed_holder_at_once(
    registry: str, tmp_path: Path
) -> None:
    state = tmp_path / "state" / "lease.state"
    holder = subprocess.Popen(
        [sys.executable, "-c", STATEFUL, registry, str(state)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    try:
        node, last = map(int, holder.stdout.readline().split())
        assert node == 0
        with pytest.raises(ferroflake.StateFileError, match="another live process"):
            LeasedGenerator(ONE_NODE, registry, **FAST, state_file=state)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert oct(state.stat().st_mode & 0o777) == "0o600"
    # The one node id is still held at the registry by the killed holder's claim: only
    # its state file lets a restart have it now, above every ID it issued.
    with LeasedGenerator(ONE_NODE, registry, **FAST, state_file=state) as resumed:
        assert resumed.node_id == 0
        assert resumed.next_id() > last


# --- bad input ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"layout": "twitter"},
        {"registry": 7},
        {"registry": b"/tmp/x"},
        {"ttl_ms": True},
        {"ttl_ms": 1.5},
        {"ttl_ms": "1000"},
        {"max_ttl_ms": "x"},
        {"max_start_wait_ms": True},
        {"clock": 3},
        {"holder": 5},
    ],
)
def test_wrong_types_raise_type_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(TypeError):
        LeasedGenerator(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"ttl_ms": -1}, OverflowError),
        ({"ttl_ms": 2**64}, OverflowError),
        ({"ttl_ms": 5}, LeaseConfigError),  # below 10 ms
        ({"ttl_ms": 1000, "max_ttl_ms": 500}, LeaseConfigError),  # TTL above max_ttl
        ({"ttl_ms": 20_000, "max_ttl_ms": 10_000}, LeaseConfigError),
        ({"clock": "sundial"}, ValueError),
    ],
)
def test_out_of_range_values_are_refused(registry: str, kwargs: dict[str, Any], error: type) -> None:
    with pytest.raises(error) as refused:
        LeasedGenerator(registry=registry, **kwargs)
    if error is OverflowError and sys.version_info >= (3, 11):
        # The exception note is what names the setting that does not fit.
        assert "while processing 'ttl_ms'" in getattr(refused.value, "__notes__", [])


def test_a_layout_whose_time_is_used_up_is_refused_before_any_claim(registry: str) -> None:
    used_up = Layout.custom(8, 4, 4, epoch=0)  # 256 ms after 1970
    with pytest.raises(ferroflake.LayoutError):
        LeasedGenerator(used_up, registry, **FAST)


@pytest.mark.parametrize(
    "address",
    ["relative/dir", "ftp://host/x", "redis:127.0.0.1", "file://host/x", "mailto:x", "", "/"],
)
def test_malformed_registry_addresses_are_refused(address: str) -> None:
    with pytest.raises(RegistryAddressError) as refused:
        LeasedGenerator(registry=address)
    assert refused.value.kind == "BAD_ADDRESS" and isinstance(refused.value, ValueError)


def test_a_file_is_not_a_registry(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("")
    with pytest.raises(RegistryAddressError, match="not a directory"):
        LeasedGenerator(registry=file)  # os.PathLike is accepted


IN_A_CONTAINER = r"""
import sys, ferroflake
try:
    ferroflake.LeasedGenerator(registry=sys.argv[1] or None, ttl_ms=1000, max_ttl_ms=1000).close()
    print("opened")
except ferroflake.RegistryUnavailableError as e:
    print(e.kind, e)
"""


def test_the_default_registry_is_refused_in_a_container(registry: str) -> None:
    # Inside a container the default registry is one of several on the host (each container
    # has its own /var/tmp): refused, saying that IDs can collide and what to use instead; a
    # directory named explicitly is accepted. The container is made known by its `container`
    # variable (as systemd-nspawn, Podman and LXC set it), in a child process, so the test
    # says the same inside CI's container and on a host.
    def run(address: str) -> str:
        env = {**os.environ, "container": "ferroflake-test"}
        done = subprocess.run(
            [sys.executable, "-c", IN_A_CONTAINER, address],
            env=env, timeout=60, capture_output=True, text=True, check=True,
        )
        return done.stdout

    said = run("")
    assert said.startswith("UNAVAILABLE "), said
    for words in [
        "runs in a container (container=ferroflake-test)",
        "IDs can collide with other containers'",
        "a mounted volume",
        "(etcd://, redis://, zk://, postgres://)",
    ]:
        assert words in said, said
    assert run(registry) == "opened\n"


@pytest.mark.parametrize(
    "address",
    ["redis://127.0.0.1:1", "etcd://127.0.0.1:1", "zk://127.0.0.1:1", "postgres://u@127.0.0.1:1/db"],
)
def test_unreachable_registries_are_a_typed_error_within_seconds(address: str) -> None:
    started = time.monotonic()
    with pytest.raises(RegistryUnavailableError) as refused:
        LeasedGenerator(registry=address)
    assert refused.value.kind == "UNAVAILABLE" and not isinstance(refused.value, ValueError)
    assert time.monotonic() - started < 10


def test_a_lease_left_open_is_released_at_interpreter_exit(registry: str) -> None:
    LeasedGenerator(ONE_NODE, registry, **FAST).close()
    script = (
        "import ferroflake, sys\n"
        "layout = ferroflake.Layout.custom(41, 0, 12, epoch=ferroflake.Layout.twitter().epoch_ms)\n"
        "keep = ferroflake.LeasedGenerator(layout, sys.argv[1], ttl_ms=1000, max_ttl_ms=1000)\n"
        "keep.next_id()\n"
        "import threading\n"
        "threading.Thread(target=lambda: [keep.next_id() for _ in iter(int, 1)], daemon=True).start()\n"
    )
    done = subprocess.run([sys.executable, "-c", script, registry], timeout=60, capture_output=True)
    assert done.returncode == 0, done.stderr
    # Released at exit, not left to lapse after its TTL: the id is free at once (a claim
    # still held would be refused with NoFreeNodeError).
    with LeasedGenerator(ONE_NODE, registry, **FAST) as after:
        assert after.node_id == 0


def test_a_node_id_a_generator_of_this_process_holds_is_refused(registry: str) -> None:
    held = ferroflake.Generator(0)  # node id 0, on the Twitter layout and the system clock
    with pytest.raises(ferroflake.NodeInUseError, match="node id 0"):
        LeasedGenerator(ONE_NODE, registry, **FAST)
    del held  # the node id is free once its generator is gone, and the claim went back
    with LeasedGenerator(ONE_NODE, registry, **FAST) as gen:
        assert gen.node_id == 0
        gen.next_id()


def test_status_and_repr(registry: str) -> None:
    with LeasedGenerator(ONE_NODE, registry, **FAST) as gen:
        text = repr(gen)
        assert "node_id=0" in text and "held" in text
        assert json.dumps(gen.status) == '"held"'
        assert gen.epoch > 0 and gen.counters.waits >= 0


def test_the_clock_is_read_against_the_registrys(registry: str) -> None:
    with LeasedGenerator(ONE_NODE, registry, **FAST) as gen:
        # The embedded registry's clock is this host's: off by no more than the reading's
        # round trip and a millisecond's grain.
        skew, uncertainty = gen.clock_skew_ms, gen.clock_skew_uncertainty_ms
        assert skew is not None and uncertainty is not None
        assert abs(skew) <= uncertainty + 2, (skew, uncertainty)
    assert gen.clock_skew_ms is None  # closed
    # On a registry of its own, a millisecond past now: node 0 issued up to now in this
    # process, and a clock behind that is refused (NodeInUseError) whatever the registry.
    now = ferroflake.ManualClock(int(time.time() * 1000) + 1)
    with LeasedGenerator(ONE_NODE, registry + "-manual", clock=now, **FAST) as manual:
        assert manual.clock_skew_ms is None  # a manual clock reads what it is told
    with pytest.raises(LeaseConfigError, match="max_clock_skew"):
        LeasedGenerator(ONE_NODE, registry, max_clock_skew_ms=60_000, **FAST)


FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"

AHEAD = """
import sys
import ferroflake
try:
    ferroflake.LeasedGenerator(ferroflake.Layout.custom(41, 0, 12), sys.argv[1], ttl_ms=1000, max_ttl_ms=1000)
except ferroflake.ClockSkewError as e:
    print(e.kind, isinstance(e, ferroflake.LeaseError), e)
"""


@pytest.mark.skipif(not Path(FAKETIME).exists(), reason="libfaketime is missing")
def test_a_clock_an_hour_ahead_of_the_registrys_is_refused(registry: str) -> None:
    # libfaketime sets this process's clock an hour ahead; the embedded registry reads the
    # kernel's, which it does not fake.
    env = dict(os.environ, LD_PRELOAD=FAKETIME, FAKETIME="+1h", FAKETIME_DONT_FAKE_MONOTONIC="1")
    done = subprocess.run(
        [sys.executable, "-c", AHEAD, registry], env=env, timeout=60, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    kind, is_lease_error, message = done.stdout.split(" ", 2)
    assert (kind, is_lease_error) == ("CLOCK_SKEW", "True"), done.stdout
    # An hour, give or take the reading's few ms: "1h 2ms ahead" or "59m 59s 999ms ahead".
    assert re.search(r": (1h( \d+ms)?|59m 59s \d+ms) ahead", message), message
