#!/usr/bin/env python3
"""Turns one run of the core benchmarks into the tables of BENCHMARKS.md.

Usage: summarize.py CRITERION_DIR SUSTAINED_JSONL

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
    rows = [(k, v) for k, v in res.items() if not k[0].startswith("two_threads")]
    rows.sort(key=lambda kv: (next(i for i, p in enumerate(order) if kv[0][0].startswith(p)), method(kv[0][0]), kv[0]))
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


def main(criterion_dir, sustained_path):
    res = load_criterion(criterion_dir)
    one_thread(res)
    two_threads(res)
    long_runs(sustained_path)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
