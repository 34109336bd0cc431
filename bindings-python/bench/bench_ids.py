"""Per-call cost of ferroflake's Python API next to the peers a user would otherwise pick.

Run through bench/run.sh (which makes the venv and installs the peers). Prints a Markdown
table: per-call (or per-ID) nanoseconds, best and median of the rounds, and the ratio to
time.time_ns(). Every entrant is timed by the same loop, and the entrants take turns within
each round, so the shared machine's noise falls on all of them alike. With
FERROFLAKE_BENCH_REPORT set, the same figures also go there as JSON lines (a first line with
the versions, then one line per entrant).

The Twitter layout issues at most 4096 IDs per ms per node, so a long loop of next_id()
measures that cap (about 244 ns/ID), not the call. Two honest ways around it, both shown:
- "wide" layout: 41 time / 0 node / 22 sequence bits, 4.2 million IDs per ms, which no
  loop here reaches: every call takes the fast path;
- Twitter "bursts": each timed burst starts at a fresh millisecond and issues at most 4096
  IDs, so it never waits for the next tick.

In the same run: a LeasedGenerator (wide layout, its node id leased from an embedded
registry in a fresh temporary directory; the first claim there waits out the new registry's
floor, about 2.4 s with the 2 s TTL used here) and a segment key (SQLite in the same
temporary directory, step 1,000,000, so fetches are rare and run in the background), each
next to the plain generator; and every batch both as next_ids(n) (a list of ints) and as
next_ids_array(n) (an array('q'), no int object per ID). Beside next_id, the ID mask: one
MaskKeyring's mask, unmask and base62 encode of a fixed 63-bit ID (a fixed test key: the
cost does not depend on the key or the ID).

Then, when FERROFLAKE_BENCH_SERVICE holds the address of a running `ferroflake serve`
(ferroflake+http://127.0.0.1:PORT/, as benches/service.sh sets it), segments taken over
HTTP: SegmentKey.next_id() on a key of the service's store against one on a local SQLite
file, both created with table step 100,000 and opened with the default settings (the step
doubles with each range up to 1,000,000; a warm-up takes them there). The two keys take
turns in each round, each issuing --remote-ids IDs (default 10,000,000: 10 ranges,
refills included) in the same loop as above; IDs/s per key and the remote / local ratio,
medians over the rounds. Around each remote run, the service's CPU time (/proc/PID/stat
utime + stime, PID in FERROFLAKE_BENCH_SERVICE_PID) and the HTTP requests it answered
(ferroflake_http_requests_total at /metrics, its scrapes left out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request
import uuid
from functools import partial
from itertools import repeat
from typing import Callable

import flakeid
import snowflake
import uuid_utils

import ferroflake

# 524,288 IDs per ms: out of reach of a loop of Python calls. Three node bits, as one process
# holds one generator per node id: the lease takes the registry's first free id, 0, and
# each plain generator has an id of its own.
WIDE = ferroflake.Layout.custom(41, 3, 19, epoch=ferroflake.Layout.twitter().epoch_ms)


def time_calls(call: Callable[[], object], n: int) -> float:
    """ns per call of `call`, over n calls in one tight loop."""
    start = time.perf_counter_ns()
    for _ in repeat(None, n):
        call()
    return (time.perf_counter_ns() - start) / n


def next_fresh_ms() -> None:
    """Spin until the wall-clock millisecond changes, so a burst starts a fresh tick."""
    now = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 == now:
        pass


def twitter_burst(calls: int) -> Callable[[], float]:
    gen = ferroflake.Generator(1)
    next_id = gen.next_id

    def measure() -> float:
        next_fresh_ms()
        return time_calls(next_id, calls)

    return measure


def batch(next_ids: Callable[[int], object], size: int, fresh_ms: bool) -> Callable[[], float]:
    def measure() -> float:
        total = 0.0
        for _ in range(20):
            if fresh_ms:
                next_fresh_ms()
            start = time.perf_counter_ns()
            next_ids(size)
            total += time.perf_counter_ns() - start
        return total / (20 * size)

    return measure


def int_floor(size: int) -> Callable[[], float]:
    """What CPython itself pays to make (and free) a list of `size` 63-bit ints."""
    first = 2**62

    def measure() -> float:
        total = 0.0
        for _ in range(20):
            start = time.perf_counter_ns()
            list(range(first, first + size))
            total += time.perf_counter_ns() - start
        return total / (20 * size)

    return measure


def loop(call: Callable[[], object], n: int) -> Callable[[], float]:
    return lambda: time_calls(call, n)


def entrants(n: int, scratch: str, opened: list[object]) -> dict[str, Callable[[], float]]:
    leased = ferroflake.LeasedGenerator(
        WIDE, os.path.join(scratch, "registry"), ttl_ms=2000, max_ttl_ms=2000
    )
    wide = ferroflake.Generator(4, WIDE)
    segments = ferroflake.SegmentAllocator(f"sqlite://{os.path.join(scratch, 'segments.db')}")
    segments.create_key("bench", 1, 1_000_000)
    key = segments.key("bench")
    opened += [leased, segments]
    wide_fast = ferroflake.Generator(5, WIDE, clock="fast")
    keys = ferroflake.MaskKeyring("1:000102030405060708090a0b0c0d0e0f")
    an_id = wide.next_id()
    masked = keys.mask(an_id)
    peer_snowflake = snowflake.SnowflakeGenerator(1)
    peer_flakeid = flakeid.SnowflakeGenerator(
        timestamp_bits=41, datacenter_bits=0, machine_bits=0, sequence_bits=22
    )
    return {
        "ferroflake next_id() wide layout": loop(wide.next_id, n),
        'ferroflake next_id() wide layout, clock="fast"': loop(wide_fast.next_id, n),
        "ferroflake next_id() twitter, bursts of 2000": twitter_burst(2000),
        "ferroflake MaskKeyring.mask(id) 63 bits": loop(partial(keys.mask, an_id), n),
        "ferroflake MaskKeyring.unmask(masked) 63 bits": loop(partial(keys.unmask, masked), n),
        'ferroflake MaskKeyring.encode(id) 63 bits, "base62"': loop(partial(keys.encode, an_id), n),
        "ferroflake next_ids(4096) wide layout, per ID": batch(wide.next_ids, 4096, fresh_ms=False),
        "ferroflake next_ids_array(4096) wide layout, per ID": batch(
            wide.next_ids_array, 4096, fresh_ms=False
        ),
        "ferroflake next_ids(4096) twitter, fresh ms, per ID": batch(
            ferroflake.Generator(2).next_ids, 4096, fresh_ms=True
        ),
        "ferroflake next_ids_array(4096) twitter, fresh ms, per ID": batch(
            ferroflake.Generator(3).next_ids_array, 4096, fresh_ms=True
        ),
        "ferroflake LeasedGenerator.next_id() wide layout, embedded registry": loop(leased.next_id, n),
        "ferroflake LeasedGenerator.next_ids(4096) wide layout, per ID": batch(
            leased.next_ids, 4096, fresh_ms=False
        ),
        "ferroflake LeasedGenerator.next_ids_array(4096) wide layout, per ID": batch(
            leased.next_ids_array, 4096, fresh_ms=False
        ),
        "ferroflake SegmentKey.next_id() SQLite, step 1,000,000": loop(key.next_id, n),
        "ferroflake SegmentKey.next_ids(4096) SQLite, step 1,000,000, per ID": batch(
            key.next_ids, 4096, fresh_ms=False
        ),
        "ferroflake SegmentKey.next_ids_array(4096) SQLite, step 1,000,000, per ID": batch(
            key.next_ids_array, 4096, fresh_ms=False
        ),
        "floor: list(range(2**62, 2**62 + 4096)), per int": int_floor(4096),
        "time.time_ns()": loop(time.time_ns, n),
        # What any method of ours costs before it does anything: the generator is unfenced,
        # so this stores the value the fence already has.
        "floor: a PyO3 method call, Generator.clear_fence() (no arguments, returns None)": loop(
            wide.clear_fence, n
        ),
        "uuid_utils.uuid7()": loop(uuid_utils.uuid7, n),
        "snowflake-id next(SnowflakeGenerator)": loop(peer_snowflake.__next__, n),
        "flakeid SnowflakeGenerator.next_id() (22 sequence bits)": loop(peer_flakeid.next_id, n),
        "uuid.uuid4()": loop(uuid.uuid4, n),
    }


REMOTE_STEP = 100_000


def service_ticks(pid: str) -> int | None:
    """The service's CPU time so far (utime + stime), in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            rest = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(rest[11]) + int(rest[12])  # fields 14 and 15; rest starts at field 3


def service_requests(address: str) -> int | None:
    """The HTTP requests the service has answered, but for its /metrics scrapes."""
    url = address.replace("ferroflake+http://", "http://", 1).rstrip("/") + "/metrics"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            text = answer.read().decode()
    except OSError:
        return None
    return sum(
        int(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("ferroflake_http_requests_total{") and 'route="/metrics"' not in line
    )


def remote(address: str, rounds: int, ids: int, scratch: str) -> dict[str, object]:
    """IDs/s from a segment taken over HTTP against a local SQLite key (see the module doc)."""
    pid = os.environ.get("FERROFLAKE_BENCH_SERVICE_PID", "")
    name = f"remote_{os.getpid()}"
    keys = {}
    opened = []
    try:
        for side, store in (("local", f"sqlite://{os.path.join(scratch, 'local.db')}"), ("remote", address)):
            allocator = ferroflake.SegmentAllocator(store)
            opened.append(allocator)
            allocator.create_key(name, 1, REMOTE_STEP)
            keys[side] = allocator.key(name)
        for key in keys.values():  # warm-up: ranges of 100,000 to 800,000, then 1,000,000
            time_calls(key.next_id, 4_000_000)
        before = {side: key.status() for side, key in keys.items()}
        rates: dict[str, list[float]] = {"local": [], "remote": []}
        ratios = []
        requests: int | None = 0
        ticks: int | None = 0
        for _ in range(rounds):
            rates["local"].append(1e9 / time_calls(keys["local"].next_id, ids))
            requests_before, ticks_before = service_requests(address), service_ticks(pid)
            rates["remote"].append(1e9 / time_calls(keys["remote"].next_id, ids))
            ticks_after, requests_after = service_ticks(pid), service_requests(address)
            if None in (requests, requests_before, requests_after):
                requests = None
            else:
                requests += requests_after - requests_before  # type: ignore[operator]
            if None in (ticks, ticks_before, ticks_after):
                ticks = None
            else:
                ticks += ticks_after - ticks_before  # type: ignore[operator]
            ratios.append(rates["remote"][-1] / rates["local"][-1])
        after = {side: key.status() for side, key in keys.items()}
    finally:
        for allocator in opened:
            allocator.close()
    tck = os.sysconf("SC_CLK_TCK")
    return {
        "kind": "remote",
        "face": "python",
        "status": "measured",
        "table_step": REMOTE_STEP,
        "step": after["remote"].step,
        "rounds": rounds,
        "ids_per_run": ids,
        "local_per_second": statistics.median(rates["local"]),
        "remote_per_second": statistics.median(rates["remote"]),
        "ratio": statistics.median(ratios),
        **{f"{side}_fetches": after[side].fetches - before[side].fetches for side in keys},
        **{f"{side}_waits": after[side].waits - before[side].waits for side in keys},
        "errors": 0,  # next_id() raises on an error, which ends the bench
        "service_ids": rounds * ids,
        "service_requests": requests,
        "service_cpu_s": None if ticks is None else ticks / tck,
        "clk_tck": tck,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=50_000, help="calls per timed loop")
    parser.add_argument(
        "--remote-ids", type=int, default=10_000_000, help="IDs per run of a key in the remote rounds"
    )
    args = parser.parse_args()
    service = os.environ.get("FERROFLAKE_BENCH_SERVICE")

    scratch = tempfile.mkdtemp(prefix="ferroflake-bench-")
    opened: list[object] = []
    try:
        runs = entrants(args.calls, scratch, opened)
        samples: dict[str, list[float]] = {name: [] for name in runs}
        for name, measure in runs.items():  # warm up: imports, caches, TSC calibration
            measure()
        for _ in range(args.rounds):
            for name, measure in runs.items():
                samples[name].append(measure())
        if service:
            remote_row = remote(service, args.rounds, args.remote_ids, scratch)
        else:
            remote_row = {"kind": "remote", "face": "python", "status": "skipped",
                          "detail": "FERROFLAKE_BENCH_SERVICE not set"}
    finally:
        for held in opened:
            held.close()  # type: ignore[attr-defined]
        shutil.rmtree(scratch, ignore_errors=True)

    baseline = min(samples["time.time_ns()"])
    print(
        f"Python {platform.python_version()} ({sys.implementation.name}), "
        f"ferroflake {ferroflake.__version__}, uuid_utils {uuid_utils.__version__}, "
        f"snowflake-id {snowflake.__version__}, flakeid {flakeid.__version__}; "
        f"{args.rounds} rounds, {args.calls} calls per loop\n"
    )
    print("| call | best ns | median ns | best / time.time_ns() |")
    print("| --- | ---: | ---: | ---: |")
    for name, values in samples.items():
        best = min(values)
        print(f"| {name} | {best:.1f} | {statistics.median(values):.1f} | {best / baseline:.2f} |")
    if remote_row["status"] == "measured":
        print(
            f"\nSegmentKey.next_id(), table step {REMOTE_STEP:,} (step now {remote_row['step']:,}), "
            f"{args.rounds} rounds of {args.remote_ids:,} IDs per key: local SQLite "
            f"{remote_row['local_per_second'] / 1e6:.2f} M IDs/s, over HTTP "
            f"{remote_row['remote_per_second'] / 1e6:.2f} M IDs/s, remote / local {remote_row['ratio']:.3f}; "
            f"fetches {remote_row['local_fetches']} local, {remote_row['remote_fetches']} remote; "
            f"the service: {remote_row['service_requests']} requests, {remote_row['service_cpu_s']} s CPU"
        )
    else:
        print(f"\nsegments over HTTP: skipped ({remote_row['detail']})")

    report = os.environ.get("FERROFLAKE_BENCH_REPORT")
    if report:
        versions = {
            "python": f"{platform.python_version()} ({sys.implementation.name})",
            "ferroflake": ferroflake.__version__,
            "uuid_utils": uuid_utils.__version__,
            "snowflake-id": snowflake.__version__,
            "flakeid": flakeid.__version__,
        }
        lines = [{"kind": "run", "rounds": args.rounds, "calls": args.calls, "versions": versions}]
        lines += [
            {"kind": "entrant", "name": name, "best_ns": min(values), "median_ns": statistics.median(values)}
            for name, values in samples.items()
        ]
        lines.append(remote_row)
        with open(report, "w", encoding="utf-8") as out:
            out.writelines(json.dumps(line) + "\n" for line in lines)


if __name__ == "__main__":
    main()
