#!/usr/bin/env python3
"""Turns one run of the benchmarks into the tables of BENCHMARKS.md.

Usage: summarize.py CRITERION_DIR SUSTAINED_JSONL [SEGMENT_JSONL]

SEGMENT_JSONL is the `segment` bench's report (latency runs, stores skipped or failed);
its criterion groups (`segment_*`) come from CRITERION_DIR. Sections with no data are left
out, so a run of one bench (`run.sh --bench segment`) prints only its own tables.

Figures are criterion's median time per iteration (robust to the preemptions of a shared
machine), divided by the IDs per iteration. Ratios compare figures taken the same way:
groups ending in `_edge` time short bursts right after a tick edge, the others time plain
back-to-back loops.
"""
import json
import sys
from pathlib import Path

# Two-thread entries whose layout caps them (4,096 per ms, or 256 per 10 ms for sonyflake);
# they are compared with each other, the rest with the rest.
CAPPED = {"ferroflake_system_twitter", "snowflaked", "snowflake_me", "rs_snowflake_mutex", "sonyflake"}


def load_criterion(root):
    """{(group, function): ns per ID} for every benchmark criterion wrote."""
    results = {}
    for bench in Path(root).glob("*/*/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        estimates = json.loads((bench.parent / "estimates.json").read_text())
        elements = (meta.get("throughput") or {}).get("Elements", 1)
        results[(meta["group_id"], meta["function_id"])] = (
            estimates["median"]["point_estimate"] / elements
        )
    return results


def fmt(ns):
    return f"{ns:.2f}" if ns < 10 else f"{ns:.1f}"


def one_thread(res):
    def method(group):
        return "edge" if group.endswith("_edge") else "plain"

    rows = [(k, v) for k, v in res.items() if not k[0].startswith(("two_threads", "segment"))]
    if not rows:
        return
    clock = {m: res.get((f"clock{'_edge' if m == 'edge' else ''}", "system_time_now_ms")) for m in ("edge", "plain")}
    best = {}
    for (group, name), ns in res.items():
        if group.startswith("peer_") and name != "sonyflake":
            m = method(group)
            if m not in best or ns < best[m][1]:
                best[m] = (f"{group}/{name}", ns)
    print("### One thread\n")
    print("Best peer per method: " + ", ".join(f"{m}: `{b[0]}` {fmt(b[1])} ns" for m, b in sorted(best.items())) + "\n")
    print("| benchmark | method | ns/ID | M IDs/s | x SystemTime read | best peer / this |")
    print("|---|---|---:|---:|---:|---:|")
    order = ("clock", "ferroflake", "peer")
    # Groups of no listed family (the ID mask's, ...) come last.
    rows.sort(key=lambda kv: (next((i for i, p in enumerate(order) if kv[0][0].startswith(p)), len(order)), method(kv[0][0]), kv[0]))
    for (group, name), ns in rows:
        m = method(group)
        ratio = f"{ns / clock[m]:.2f}x" if clock.get(m) else ""
        vs = f"{best[m][1] / ns:.2f}x" if group.startswith("ferroflake") and m in best else ""
        print(f"| `{group}/{name}` | {m} | {fmt(ns)} | {1e3 / ns:.1f} | {ratio} | {vs} |")


def two_threads(res):
    two = {name: ns for (group, name), ns in res.items() if group == "two_threads"}
    if not two:
        return
    peers = {n: v for n, v in two.items() if not n.startswith("ferroflake") and "unshared" not in n}
    best_capped = min((n for n in peers if n in CAPPED), key=peers.get, default=None)
    best_open = min((n for n in peers if n not in CAPPED), key=peers.get, default=None)
    print("\n### Two threads sharing one generator\n")
    print(f"Best peer: capped `{best_capped}`, uncapped `{best_open}` (`ulid_generate_unshared` shares nothing and is shown only for reference).\n")
    print("| benchmark | capped | ns/ID (both threads) | M IDs/s | best peer / this |")
    print("|---|---|---:|---:|---:|")
    for name in sorted(two, key=lambda n: (not n.startswith("ferroflake"), n in CAPPED, two[n])):
        capped = name in CAPPED
        vs = ""
        if name.startswith("ferroflake"):
            ref = best_capped if capped else best_open
            vs = f"{two[ref] / two[name]:.2f}x" if ref else ""
        print(f"| `{name}` | {'yes' if capped else 'no'} | {fmt(two[name])} | {1e3 / two[name]:.1f} | {vs} |")


def long_runs(path):
    path = Path(path)
    if not path.exists():
        return
    print("\n### Long runs (sustained rate, worst 1,024 consecutive calls, checks)\n")
    print("| run | threads | IDs | IDs/s | of cap | worst 1,024 calls | stalls > 1 ms | errors | duplicates | order breaks |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in path.read_text().splitlines():
        r = json.loads(line)
        cap = r["cap_per_second"]
        frac = f'{100 * r["per_second"] / cap:.2f}%' if cap else "no cap"
        worst = r["worst_chunk_ns"]
        worst = f"{worst / 1e3:,.0f} us" if worst is not None else ""
        over = r["stalls_over_1ms"]
        print(
            f'| {r["name"]} | {r["threads"]} | {r["calls"]:,} | {r["per_second"]:,.0f} | {frac} '
            f'| {worst} | {"" if over is None else f"{over:,}"} | {r["errors"]} | {r["duplicates"]} '
            f'| {r["order_breaks"]} |'
        )


# The segment bench's criterion figures, in table order: (group, function, threads, call,
# method). Each is compared with the bare `fetch_add` on as many threads.
SEGMENT_CALLS = [
    ("segment_one_thread", "fetch_add", 1, "`AtomicU64::fetch_add(1, Relaxed)`", "plain loop"),
    ("segment_one_thread", "segment_memory", 1, "segment `next_id().ok()`, memory store, step ≥ 1,000,000", "plain loop"),
    ("segment_one_thread", "segment_memory_result", 1, "the same, whole 72-byte `Result` black-boxed", "plain loop"),
    ("segment_one_thread_edge", "snowflake_twitter", 1, "core `next_id`, Twitter layout, system clock", "tick-edge bursts"),
    ("segment_two_threads", "fetch_add_shared", 2, "`fetch_add` on one shared atomic", "two threads"),
    ("segment_two_threads", "segment_memory_shared", 2, "segment `next_id().ok()`, one shared key", "two threads"),
]
SEGMENT_BASE = {1: ("segment_one_thread", "fetch_add"), 2: ("segment_two_threads", "fetch_add_shared")}
SEGMENT_LATENCY = {
    "fetch_add": "`fetch_add`, traced the same way (the floor)",
    "sqlite_step_1000_default": "SQLite, step 1,000, default settings (step grows to 1,000,000)",
    "sqlite_step_1000_max_step_1000": "SQLite, step 1,000, `max_step` 1,000 (a fetch per 1,000 IDs)",
}
SEGMENT_STORES = {
    "sqlite": "SQLite (temp file, WAL, synchronous=FULL)",
    "postgres": "PostgreSQL",
    "mysql": "MySQL / MariaDB",
    "redis": "Redis",
    "remote": "a `ferroflake serve` on SQLite, over HTTP (`ferroflake+http://`, loopback)",
}


def duration(ns):
    if ns is None:
        return ""
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def segment(res, report_path):
    report = []
    if report_path and Path(report_path).exists():
        report = [json.loads(line) for line in Path(report_path).read_text().splitlines() if line.strip()]
    calls = [row for row in SEGMENT_CALLS if (row[0], row[1]) in res]
    if not calls and not report:
        return
    print("\n### Segment mode\n")
    if calls:
        print("| threads | call | method | ns/ID | M IDs/s | rate / `fetch_add` rate |")
        print("|---:|---|---|---:|---:|---:|")
        for group, name, threads, what, method in calls:
            ns = res[(group, name)]
            base = res.get(SEGMENT_BASE[threads])
            ratio = f"{base / ns:.2f}" if base else ""
            print(f"| {threads} | {what} | {method} | {fmt(ns)} | {1e3 / ns:.1f} | {ratio} |")
    latency = [r for r in report if r["kind"] == "latency"]
    if latency:
        print("\nPer-call latency of `next_id` (one thread, a TSC stamp after every call):\n")
        print("| run | calls | M IDs/s | p50 | p99 | p99.9 | p99.99 | max | fetches | waits | errors |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in latency:
            counts = [("" if r[k] is None else f"{r[k]:,}") for k in ("fetches", "waits")]
            print(
                f'| {SEGMENT_LATENCY.get(r["name"], r["name"])} | {r["calls"]:,} | {r["per_second"] / 1e6:.2f} '
                f'| {duration(r["p50_ns"])} | {duration(r["p99_ns"])} | {duration(r["p999_ns"])} '
                f'| {duration(r["p9999_ns"])} | {duration(r["max_ns"])} | {counts[0]} | {counts[1]} | {r["errors"]} |'
            )
    fetches = {r["store"]: r for r in report if r["kind"] == "fetch"}
    stores = [s for s in SEGMENT_STORES if s in fetches or ("segment_fetch", s) in res]
    if stores:
        print("\nOne segment, `store.allocate(key, 1000)` (criterion median):\n")
        print("| store | time |")
        print("|---|---:|")
        for store in stores:
            r = fetches.get(store, {})
            if r.get("status") in ("skipped", "failed"):
                shown = f'{r["status"]}: {r["detail"]}'
            else:
                shown = duration(res.get(("segment_fetch", store)))
            print(f"| {SEGMENT_STORES[store]} | {shown} |")
    for r in (r for r in report if r["kind"] == "remote"):
        if r["status"] != "measured":
            print(f'\nSegments over HTTP: {r["status"]} ({r["detail"]})')
            continue
        cpu = "?" if r["service_cpu_s"] is None else f'{r["service_cpu_s"]:.2f} s'
        print(
            f'\nSegments over HTTP (`ferroflake+http://`, table step {r["table_step"]:,}, step {r["step"]:,}):'
            f' {r["remote_per_second"] / 1e6:.1f} M IDs/s against {r["local_per_second"] / 1e6:.1f} M IDs/s from a local'
            f' SQLite key, {r["ratio"]:.2f}×; the service answered {r["service_requests"]} requests and spent {cpu} CPU'
            f' for {r["service_ids"]:,} IDs.'
        )


def main(criterion_dir, sustained_path, segment_path=None):
    res = load_criterion(criterion_dir)
    one_thread(res)
    two_threads(res)
    long_runs(sustained_path)
    segment(res, segment_path)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
