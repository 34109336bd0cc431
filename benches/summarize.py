#!/usr/bin/env python3
"""Turns one run of the core benchmarks into the tables of BENCHMARKS.md.

Usage: summarize.py CRITERION_DIR SUSTAINED_JSONL
Reads criterion's estimates (the "typical" figure criterion prints: the slope of time
against iterations, or the mean when there is no slope) and the sustained runs' JSON lines.
"""
import json
import sys
from pathlib import Path

CLOCK = "clock/system_time_now_ms"


def load_criterion(root):
    """{"group/function": ns per ID} for every benchmark criterion wrote."""
    results = {}
    for bench in Path(root).glob("*/*/new/benchmark.json"):
        meta = json.loads(bench.read_text())
        estimates = json.loads((bench.parent / "estimates.json").read_text())
        typical = estimates.get("slope") or estimates["mean"]
        per_iter = typical["point_estimate"]
        elements = (meta.get("throughput") or {}).get("Elements", 1)
        results[f'{meta["group_id"]}/{meta["function_id"]}'] = per_iter / elements
    return results


def row(name, ns, clock_ns=None, best_ns=None):
    cells = [f"`{name}`", f"{ns:.1f}", f"{1e3 / ns:.1f}"]
    cells.append(f"{ns / clock_ns:.2f}x" if clock_ns else "")
    cells.append(f"{best_ns / ns:.2f}x" if best_ns else "")
    return "| " + " | ".join(cells) + " |"


def main(criterion_dir, sustained_path):
    res = load_criterion(criterion_dir)
    clock_ns = res.get(CLOCK)
    head = "| benchmark | ns/ID | M IDs/s | x clock read | best peer / this |"
    rule = "|---|---:|---:|---:|---:|"

    one = {k: v for k, v in res.items() if not k.startswith("two_threads/")}
    peers = {k: v for k, v in one.items() if k.startswith("peer_")}
    best_peer = min(peers, key=peers.get) if peers else None
    print(f"### One thread (best peer: `{best_peer}`)\n")
    print(head)
    print(rule)
    for name in sorted(one, key=lambda k: (k.startswith("peer_"), k)):
        ours = not name.startswith(("peer_", "clock/"))
        print(row(name, one[name], clock_ns, peers[best_peer] if ours and best_peer else None))

    two = {k: v for k, v in res.items() if k.startswith("two_threads/")}
    if two:
        two_peers = {
            k: v
            for k, v in two.items()
            if not k.split("/", 1)[1].startswith("ferroflake") and "unshared" not in k
        }
        best_two = min(two_peers, key=two_peers.get) if two_peers else None
        print(f"\n### Two threads sharing one generator (best peer: `{best_two}`)\n")
        print("| benchmark | ns/ID (both threads) | M IDs/s | | best peer / this |")
        print(rule)
        for name in sorted(two, key=lambda k: (not k.startswith("two_threads/ferroflake"), two[k])):
            ours = name.startswith("two_threads/ferroflake")
            print(row(name, two[name], None, two_peers[best_two] if ours and best_two else None))

    path = Path(sustained_path)
    if path.exists():
        print("\n### Long runs (sustained rate, worst 1,024 consecutive calls, checks)\n")
        print("| run | threads | IDs | IDs/s | of cap | worst 1,024 calls | windows > 1 ms | errors | duplicates | order breaks |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for line in path.read_text().splitlines():
            r = json.loads(line)
            cap = r["cap_per_second"]
            frac = f'{100 * r["per_second"] / cap:.2f}%' if cap else "no cap"
            worst = r["worst_chunk_ns"]
            worst = f"{worst / 1e3:.0f} us" if worst is not None else ""
            over = r["chunks_over_1ms"]
            print(
                f'| {r["name"]} | {r["threads"]} | {r["calls"]:,} | {r["per_second"]:,.0f} | {frac} '
                f'| {worst} | {"" if over is None else over} | {r["errors"]} | {r["duplicates"]} '
                f'| {r["order_breaks"]} |'
            )


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
