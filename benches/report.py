#!/usr/bin/env python3
"""Writes BENCHMARKS.md from one run of benches/all.sh, or some of its tables.

Usage: report.py [--bench-dir DIR] [--criterion-dir DIR] [--out PATH] [--since EPOCH]
                 [--sections NAME,...]

DIR defaults to <repo>/target/ferroflake-bench (what all.sh fills: run.env, <face>.jsonl,
<face>.status, <face>.log, criterion-lease/), the criterion directory to <repo>/target/criterion
(the core and segment benches'), PATH to $FF_BENCH_OUT or else <repo>/BENCHMARKS.md.

One table per face, ferroflake and its peers side by side, each with a ratio to the face's
baseline, and a few lines saying what the rows are and whether the face's targets are met.
Every verdict is computed from the figures of this run. Criterion figures older than the run's
start are ignored, so a face that did not run shows as missing, not as an older result.

A run of one face's script writes only its tables: benches/run.sh gives `--since` (its start,
as there is no run.env) and `--sections core,segment`, and `--out -` prints them.
"""
import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMAND = "bash benches/all.sh"


# ---------------------------------------------------------------------------- inputs


def read_env(path):
    env = {}
    if path.exists():
        for line in path.read_text().splitlines():
            key, _, value = line.partition("=")
            env[key] = value
    return env


def read_jsonl(path):
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_criterion(root, since):
    """{(group, function): ns per element} for the criterion results written since `since`."""
    results = {}
    for bench in Path(root).glob("*/*/new/benchmark.json"):
        estimates = bench.parent / "estimates.json"
        if not estimates.exists() or estimates.stat().st_mtime < since:
            continue
        meta = json.loads(bench.read_text())
        elements = (meta.get("throughput") or {}).get("Elements", 1)
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        results[(meta["group_id"], meta["function_id"])] = median / elements
    return results


def cargo_lock_versions():
    """{crate: highest version in Cargo.lock}, for naming the Rust peers."""
    versions = {}
    lock = ROOT / "Cargo.lock"
    if lock.exists():
        for name, version in re.findall(r'name = "([^"]+)"\nversion = "([^"]+)"', lock.read_text()):
            key = tuple(int(p) if p.isdigit() else 0 for p in re.split(r"[.+-]", version))
            if name not in versions or key > versions[name][0]:
                versions[name] = (key, version)
    return {name: v for name, (_, v) in versions.items()}


class Face:
    """One face's inputs: its status line from all.sh and its JSON lines."""

    def __init__(self, bench_dir, name):
        self.name = name
        self.log = bench_dir / f"{name}.log"
        self.rows = read_jsonl(bench_dir / f"{name}.jsonl")
        status = bench_dir / f"{name}.status"
        parts = status.read_text().split() if status.exists() else []
        self.exit = int(parts[0]) if parts else None

    def note(self):
        """A line for a face that did not run cleanly (empty if it did)."""
        where = f"`target/ferroflake-bench/{self.log.name}`"
        if self.exit is None:
            return f"*Not run in this run* (no {where})."
        if self.exit != 0:
            return f"**The bench failed** (exit {self.exit}); what it measured before that is below. Its output: {where}."
        return ""

    def run(self):
        """The face's `run` row (rounds, calls, versions), if it wrote one."""
        return next((r for r in self.rows if r["kind"] == "run"), None)

    def versions(self):
        """The run row's versions as ` Versions: a 1, b 2.`, or an empty string."""
        run = self.run()
        return " Versions: " + ", ".join(f"{k} {v}" for k, v in run["versions"].items()) + "." if run else ""


# ---------------------------------------------------------------------------- formatting

# Two-thread entries whose layout caps them (4,096 per ms, or 256 per 10 ms for sonyflake);
# they are compared with each other, the rest with the rest.
CAPPED = {"ferroflake_system_twitter", "snowflaked", "snowflake_me", "rs_snowflake_mutex", "sonyflake"}

SEGMENT_STORES = {
    "sqlite": "SQLite (temp file, WAL, synchronous=FULL)",
    "postgres": "PostgreSQL",
    "mysql": "MySQL / MariaDB",
    "redis": "Redis",
    "remote": "a `ferroflake serve` on SQLite, over HTTP (`ferroflake+http://`, loopback)",
}


def fmt(ns):
    """Nanoseconds with the digits that matter at that size."""
    return f"{ns:.2f}" if ns < 10 else f"{ns:.1f}"


def duration(ns):
    """A duration in ns, µs or ms."""
    if ns is None:
        return ""
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def table(header, rows):
    """A markdown table: the first column left-aligned, the figures right-aligned."""
    align = ["---"] + ["---:"] * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return lines


def ratio(value, base, digits=2):
    return f"{value / base:.{digits}f}" if value is not None and base else ""


def verdict(ok):
    if ok is None:
        return "not measured"
    return "**met**" if ok else "**not met**"


def plural(count, word):
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def ns(value):
    return "" if value is None else fmt(value)


# ---------------------------------------------------------------------------- core

# One row per generator, ferroflake's first, then the peers: (label, 1-thread criterion key,
# 2-thread function, 1-thread sustained run, 2-thread sustained run). None: not measured
# that way.
CORE_ROWS = [
    ("ferroflake, Twitter layout, system clock", ("ferroflake_edge", "system_twitter"), "ferroflake_system_twitter", "ferroflake twitter system", "ferroflake twitter system x2"),
    ("ferroflake, Twitter layout, `FastClock` (TSC)", ("ferroflake_edge", "fast_twitter"), None, "ferroflake twitter fast", None),
    ("ferroflake, wide layout, system clock", ("ferroflake_edge", "system_wide"), "ferroflake_system_wide", "ferroflake wide system", "ferroflake wide system x2"),
    ("ferroflake, wide layout, `FastClock` (TSC)", ("ferroflake_edge", "fast_wide"), "ferroflake_fast_wide", None, None),
    ("ferroflake, 1 s tick, `FastClock` (coarse)", ("ferroflake_edge", "fast_1s_tick"), None, None, None),
    ("ferroflake, sonyflake layout, `FastClock`", None, None, "ferroflake sonyflake fast", None),
    ("ferroflake `next_ids(64)`, Twitter, system clock, per ID", ("ferroflake_next_ids_edge", "system_twitter_64"), None, None, None),
    ("ferroflake `next_ids(1024)`, Twitter, system clock, per ID", ("ferroflake_next_ids_edge", "system_twitter_1024"), None, None, None),
    ("ferroflake `next_ids(1024)`, wide, `FastClock`, per ID", ("ferroflake_next_ids_edge", "fast_wide_1024"), None, None, None),
    ("`next_id`, wide layout, system clock, plain loop (beside the mask)", ("mask", "next_id_wide_system"), None, None, None),
    ("`Mask::mask`, 63 bits (10 SipHash-2-4 rounds)", ("mask", "mask_63"), None, None, None),
    ("`Mask::unmask`, 63 bits", ("mask", "unmask_63"), None, None, None),
    ("`Mask::mask`, 53 bits", ("mask", "mask_53"), None, None, None),
    ("`next_id` then `Mask::encode` (base62 text)", ("mask", "next_id_then_encode_base62"), None, None, None),
    ("`MaskKeyring::decode` (base62 text)", ("mask", "keyring_decode_base62"), None, None, None),
    ("snowflaked `sync::Generator`", ("peer_edge", "snowflaked"), "snowflaked", "snowflaked", "snowflaked x2"),
    ("rs-snowflake (`Mutex` when shared)", ("peer_edge", "rs_snowflake"), "rs_snowflake_mutex", "rs-snowflake", "rs-snowflake mutex x2"),
    ("snowflake_me, 41/5/5/12", ("peer_edge", "snowflake_me"), "snowflake_me", "snowflake_me", "snowflake_me x2"),
    ("snowflake_me, 20 sequence bits", ("peer_edge", "snowflake_me_wide"), "snowflake_me_wide", None, "snowflake_me wide x2"),
    ("idgenerator, 10 + 12 bits", ("peer_edge", "idgenerator"), None, None, None),
    ("idgenerator, 2 + 20 bits", None, "idgenerator_wide", None, None),
    ("idgenerator, defaults (8 + 8 bits)", None, None, "idgenerator (defaults)", "idgenerator (defaults) x2"),
    ("sonyflake", ("peer_edge", "sonyflake"), "sonyflake", "sonyflake", "sonyflake x2"),
    ("uuid `now_v7`", ("peer_edge", "uuid_now_v7"), "uuid_now_v7", None, "uuid now_v7 x2"),
    ("ulid `Generator` (`Mutex` when shared)", ("peer_edge", "ulid_generator"), "ulid_generator_mutex", None, "ulid generator mutex x2"),
    ("ulid `Ulid::generate` (shares nothing, no order)", ("peer_edge", "ulid_generate"), "ulid_generate_unshared", None, None),
]
CLOCK_ROWS = [
    ("clock read: `SystemTime::now()` → ms (the baseline)", ("clock_edge", "system_time_now_ms")),
    ("clock read: ferroflake `SystemClock`", ("clock_edge", "ferroflake_system_clock")),
    ("clock read: `FastClock`, 1 ms tick (TSC)", ("clock_edge", "fast_clock_1ms")),
    ("clock read: `FastClock`, 1 s tick (coarse)", ("clock_edge", "fast_clock_1s")),
    ("floor on the TSC: `FastClock` read + one uncontended CAS", ("clock_edge", "fast_clock_1ms_cas")),
]


def sustained_cell(run):
    if run is None:
        return ""
    if run["cap_per_second"]:
        return f'{100 * run["per_second"] / run["cap_per_second"]:.2f} % of cap'
    return f'{run["per_second"] / 1e6:.1f} M/s, no cap'


def core(res, face, bench_dir):
    runs = {r["name"]: r for r in read_jsonl(bench_dir / "sustained.jsonl")}
    clock = res.get(("clock_edge", "system_time_now_ms"))
    lock = cargo_lock_versions()
    peers = ", ".join(f"{n} {lock[n]}" for n in ("snowflaked", "rs-snowflake", "snowflake_me", "idgenerator", "sonyflake", "uuid", "ulid") if n in lock)
    out = ["## Core (Rust)", ""]
    if face.note():
        out += [face.note(), ""]
    out += [
        "Rows: ferroflake's `Generator::next_id` per layout and clock, the clock reads alone, and the peers as their docs use them"
        f" ({peers}). Layouts: Twitter 41 time / 10 node / 12 sequence bits (4,096 IDs per ms);"
        " wide 41 / 2 / 20 (never caps); 1 s tick 32 / 2 / 29.",
        "",
        "*1 thread*: criterion median per ID of bursts of at most 3,000 calls, each started just after a tick edge, so no"
        " call waits for the sequence; the ratio is to `SystemTime::now()` → ms timed the same way."
        " *2 threads*: two threads share one generator, time per ID of both threads' IDs."
        " *Sustained*: 1.5 s per generator on one thread (2 × 3 M IDs on two), IDs/s against the layout's cap;"
        " worst time of 1,024 consecutive calls; every ID checked for errors, duplicates and per-thread order.",
        "",
    ]
    rows = []
    for label, key in CLOCK_ROWS:
        if key in res:
            rows.append([label, ns(res[key]), ratio(res[key], clock), "", "", "", "", "", ""])
    for label, one, two, run1, run2 in CORE_ROWS:
        a = res.get(one) if one else None
        b = res.get(("two_threads", two)) if two else None
        r1, r2 = runs.get(run1), runs.get(run2)
        if a is None and b is None and r1 is None and r2 is None:
            continue
        checked = [r for r in (r1, r2) if r]
        checks = " / ".join(str(sum(r[k] for r in checked)) for k in ("errors", "duplicates", "order_breaks")) if checked else ""
        worst = duration(r1["worst_chunk_ns"]) if r1 and r1["worst_chunk_ns"] is not None else ""
        rows.append([label, ns(a), ratio(a, clock), ns(b), f"{1e3 / b:.1f}" if b else "", sustained_cell(r1), worst, sustained_cell(r2), checks])
    if not rows:
        return out + ["No figures."]

    # Targets.
    sys_twitter = res.get(("ferroflake_edge", "system_twitter"))
    fast_twitter = res.get(("ferroflake_edge", "fast_twitter"))
    tsc_cas = res.get(("clock_edge", "fast_clock_1ms_cas"))
    capped = [runs.get(n) for n in ("ferroflake twitter system", "ferroflake twitter fast", "ferroflake twitter system x2")]
    capped = [100 * r["per_second"] / r["cap_per_second"] for r in capped if r]
    two = {name: v for (group, name), v in res.items() if group == "two_threads"}
    open_peers = {n: v for n, v in two.items() if not n.startswith("ferroflake") and n not in CAPPED and "unshared" not in n}
    best_open = min(open_peers, key=open_peers.get) if open_peers else None
    ours2 = two.get("ferroflake_system_wide")
    worst = (runs.get("ferroflake twitter system") or {}).get("worst_chunk_ns")
    ours_runs = [r for n, r in runs.items() if n.startswith("ferroflake")]
    bad = sum(r["errors"] + r["duplicates"] + r["order_breaks"] for r in ours_runs)
    targets = [
        ("uncapped `next_id` (Twitter, system clock) ≤ 1.1× one `SystemTime::now()` read",
         f"{sys_twitter / clock:.2f}×" if sys_twitter and clock else "", None if not (sys_twitter and clock) else sys_twitter / clock <= 1.1),
        ("`FastClock` (Twitter) ≤ 1.2× one TSC read + one uncontended CAS",
         f"{fast_twitter / tsc_cas:.2f}×" if fast_twitter and tsc_cas else "", None if not (fast_twitter and tsc_cas) else fast_twitter / tsc_cas <= 1.2),
        ("≥ 99 % of the cap sustained (Twitter, 1 and 2 threads, lowest)", f"{min(capped):.2f} %" if capped else "", None if not capped else min(capped) >= 99),
        (f"2 threads, uncapped, ≥ 2× the best sharing peer's rate (`{best_open}`)",
         f"{open_peers[best_open] / ours2:.2f}×" if best_open and ours2 else "", None if not (best_open and ours2) else open_peers[best_open] / ours2 >= 2),
        ("worst 1,024 consecutive calls ≤ 1 ms at the Twitter cap (system clock)", duration(worst) if worst is not None else "", None if worst is None else worst <= 1e6),
        ("no errors, duplicates or order breaks in ferroflake's long runs", str(bad) if ours_runs else "", None if not ours_runs else bad == 0),
    ]
    out += ["Targets:", ""] + [f"- {t}: {v} {verdict(ok)}" for t, v, ok in targets] + [""]
    out += table(
        ["generator", "1 thread ns/ID", "× clock read", "2 threads ns/ID", "2 threads M IDs/s", "sustained, 1 thread", "worst 1,024 calls", "sustained, 2 threads", "errors / dups / order"],
        rows,
    )
    return out


# ---------------------------------------------------------------------------- segment

SEGMENT_ROWS = [
    ("segment_one_thread", "fetch_add", 1, "1 thread: `AtomicU64::fetch_add(1, Relaxed)` (the baseline)"),
    ("segment_one_thread", "segment_memory", 1, "1 thread: segment `next_id().ok()`, memory store"),
    ("segment_one_thread", "segment_memory_result", 1, "1 thread: the same, whole `Result` black-boxed"),
    ("segment_one_thread_edge", "snowflake_twitter", 1, "1 thread: core `next_id`, Twitter, system clock (tick-edge bursts)"),
    ("segment_two_threads", "fetch_add_shared", 2, "2 threads: `fetch_add` on one shared atomic (the baseline)"),
    ("segment_two_threads", "segment_memory_shared", 2, "2 threads: segment `next_id().ok()`, one shared key"),
]
SEGMENT_BASE = {1: ("segment_one_thread", "fetch_add"), 2: ("segment_two_threads", "fetch_add_shared")}
SEGMENT_LATENCY = {
    "fetch_add": "latency: `fetch_add`, traced the same way (the floor)",
    "sqlite_step_1000_default": "latency: SQLite, step 1,000, default settings (the step grows)",
    "sqlite_step_1000_max_step_1000": "latency: SQLite, step 1,000, `max_step` 1,000",
}


def segment(res, face, bench_dir):
    report = read_jsonl(bench_dir / "segment.jsonl")
    out = ["## Segment mode (Rust)", ""]
    if face.note():
        out += [face.note(), ""]
    out += [
        "Rows: criterion medians of plain back-to-back loops (the core row: tick-edge bursts). The memory-store key starts"
        " with a step of 1,000,000, so fetches are rare and the rows measure the hot path; the ratio is the rate against"
        " `fetch_add` on as many threads. Latency rows: 5 M calls (or 20 s) on one thread, a TSC stamp after each"
        " (about 10 ns resolution). Fetch rows: one `store.allocate(key, 1000)` per store, servers on loopback.",
        "",
    ]
    base = res.get(SEGMENT_BASE[1])
    ours = res.get(("segment_one_thread", "segment_memory"))
    share = base / ours if base and ours else None
    out += [f"Target: segment `next_id` ≥ 0.9× the `fetch_add` rate on one thread: {share:.2f}× {verdict(share >= 0.9)}." if share else "Target: segment `next_id` ≥ 0.9× the `fetch_add` rate on one thread: not measured.", ""]
    rows = []
    for group, name, threads, label in SEGMENT_ROWS:
        if (group, name) in res:
            v = res[(group, name)]
            rows.append([label, f"{fmt(v)} ns/ID", f"{1e3 / v:.1f}", ratio(res.get(SEGMENT_BASE[threads]), v)])
    for r in (r for r in report if r["kind"] == "latency"):
        counts = "" if r.get("fetches") is None else f' ({r["fetches"]:,} fetches, {r["waits"]:,} waits)'
        figure = ", ".join(f"{k} {duration(r[f])}" for k, f in (("p50", "p50_ns"), ("p99", "p99_ns"), ("p99.9", "p999_ns"), ("p99.99", "p9999_ns"), ("max", "max_ns")))
        rows.append([SEGMENT_LATENCY.get(r["name"], f'latency: {r["name"]}') + counts, figure, f'{r["per_second"] / 1e6:.1f}', ""])
    fetches = {r["store"]: r for r in report if r["kind"] == "fetch"}
    for store, label in SEGMENT_STORES.items():
        r = fetches.get(store, {})
        if r.get("status") in ("skipped", "failed"):
            rows.append([f"one segment from {label}", f'{r["status"]}: {r["detail"]}', "", ""])
        elif ("segment_fetch", store) in res:
            rows.append([f"one segment from {label}", duration(res[("segment_fetch", store)]), "", ""])
    if not rows:
        return out + ["No figures."]
    return out + table(["measurement", "result", "M IDs/s", "× `fetch_add` rate"], rows)


# ---------------------------------------------------------------------------- C ABI

C_CALLERS = ["rust", "rust-out-of-line", "rust-via-c-abi", "c-static", "c-shared"]


def c_abi(face):
    out = ["## C ABI", ""]
    if face.note():
        out += [face.note(), ""]
    # Rows with a `source` are the leased generator, the segment key and the mask; the rest
    # are plain generators on one clock each.
    rows = [r for r in face.rows if "source" not in r and "clock" in r]
    others = [r for r in face.rows if "source" in r]
    detail = f' (lowest mean of {plural(rows[0]["rounds"], "round")} × 15 runs of {rows[0]["iterations"]:,} calls)' if rows else ""
    out += [
        "Rows: `ferroflake_generator_next_id` against `Generator::next_id` on the same generator type (`Generator<AnyClock>`),"
        f" ns per call{detail}, layout 41 / 0 / 22 so no call waits for the sequence."
        " `rust`: the call inlined in the loop (the baseline); `rust-out-of-line`: behind `#[inline(never)]`;"
        " `rust-via-c-abi`: the exported function called from Rust; `c-static`, `c-shared`: a C loop (gcc -O2) through"
        " `libferroflake.a` / `libferroflake.so`.",
        "",
    ]
    if not rows:
        return out + ["No figures."]
    over = {r["clock"]: r["ns"]["c-static"] - r["ns"]["rust"] for r in rows}
    worst = max(over, key=over.get)
    out += [
        f"Target: a C call costs at most the Rust call + 2 ns: c-static − rust is at most {over[worst]:+.2f} ns ({worst} clock)"
        f" {verdict(over[worst] <= 2)}.",
        "",
    ]
    body = []
    for r in rows:
        v = r["ns"]
        body.append([r["clock"]] + [f"{v[c]:.2f}" for c in C_CALLERS] + [f'{v["c-static"] - v["rust"]:+.2f}', ratio(v["c-static"], v["rust"]), ratio(v["c-shared"], v["rust"])])
    out += table(["clock"] + C_CALLERS + ["c-static − rust", "c-static / rust", "c-shared / rust"], body)
    if not others:
        return out
    plain = next((r for r in rows if r["clock"] == "system"), None)
    out += [
        "",
        "Leased and segment IDs and the mask through the same five callers, in the same run: `leased` is"
        " `ferroflake_leased_generator_next_id` (system clock, embedded registry) against `LeasedGenerator::next_id`;"
        " `segment` is `ferroflake_segment_key_next_id` (SQLite, one huge step, so no call fetches) against"
        " `KeyHandle::next_id`; `mask` and `unmask` are `ferroflake_mask_keyring_mask`/`_unmask` (63 bits) against"
        " `Mask::mask`/`unmask`. The last column compares the C static call with the plain system-clock generator's.",
        "",
    ]
    body = []
    for r in others:
        v = r["ns"]
        body.append([r["source"]] + [f"{v[c]:.2f}" for c in C_CALLERS] + [ratio(v["c-static"], plain["ns"]["c-static"]) if plain else ""])
    return out + table(["issuer"] + C_CALLERS + ["c-static / plain system c-static"], body)


# ---------------------------------------------------------------------------- Python

PY_BASE = "time.time_ns()"
PY_NEXT_ID = "ferroflake next_id() wide layout"
PY_LEASED = "ferroflake LeasedGenerator.next_id() wide layout, embedded registry"
PY_MASK = "ferroflake MaskKeyring.mask(id) 63 bits"
PY_CALL_FLOOR = "floor: a PyO3 method call, Generator.clear_fence() (no arguments, returns None)"
PY_BATCH = "ferroflake next_ids(4096) wide layout, per ID"
CORE_MASK_63 = ("mask", "mask_63")
CORE_MASK_53 = ("mask", "mask_53")


def at_most(label, value, factor, base, base_label):
    """`label` ≤ `factor`× `base_label`: the figure, its ratio to the base and the verdict."""
    bound = f"{factor:g}× {base_label}" if factor != 1 else base_label
    if value is None or not base:
        return f"{label} ≤ {bound}: not measured"
    return f"{label} ≤ {bound}: {value:.1f} ns, {value / base:.2f}× {verdict(value <= factor * base)}"


def code_name(name):
    """An entrant's name with its call in code style: the first word holding a parenthesis,
    through the matching closing one (`list(range(...))`, `next(SnowflakeGenerator)`)."""
    open_at = name.find("(")
    if open_at < 0:
        return name
    start = name.rfind(" ", 0, open_at) + 1
    depth = 0
    for end in range(open_at, len(name)):
        depth += {"(": 1, ")": -1}.get(name[end], 0)
        if depth == 0:
            return f"{name[:start]}`{name[start:end + 1]}`{name[end + 1:]}"
    return name


def python(face, res):
    out = ["## Python", ""]
    if face.note():
        out += [face.note(), ""]
    run = face.run()
    entrants = [r for r in face.rows if r["kind"] == "entrant"]
    versions = face.versions()
    loops = f' ({plural(run["rounds"], "round")}, loops of {run["calls"]:,} calls)' if run else ""
    out += [
        "Rows: one bound method in a `for _ in itertools.repeat(None, n)` loop (the loop's own ~10-15 ns is in every row),"
        f" entrants taking turns in each round{loops}; best and median over rounds, ratio of the best to `time.time_ns()`'s."
        " The wide layout (41 / 3 / 19) and Twitter bursts of 2,000 calls from a fresh millisecond keep the layout's cap out"
        f" of the figure.{versions}",
        "",
    ]
    if not entrants:
        return out + ["No figures."]
    by = {r["name"]: r for r in entrants}
    best = lambda name: by.get(name, {}).get("best_ns")
    base = best(PY_BASE)
    one = best(PY_NEXT_ID)
    batch = best(PY_BATCH)
    call_floor = best(PY_CALL_FLOOR)
    core_mask = res.get(CORE_MASK_63)
    targets = [
        at_most("`next_id()`", one, 1.1, base, "`time.time_ns()`"),
        at_most("leased `next_id()`", best(PY_LEASED), 1.15, base, "`time.time_ns()`"),
        at_most("`MaskKeyring.mask`", best(PY_MASK), 1.2, core_mask, "the core's `Mask::mask` (63 bits)"),
        "`next_ids(4096)` ≤ 8 ns per ID: " + (f"{batch:.1f} ns {verdict(batch <= 8)}" if batch else "not measured"),
    ]
    out += ["Targets: " + "; ".join(targets) + "."]
    if call_floor and one:
        out += [
            f"A PyO3 method call costs {call_floor:.1f} ns here (the floor row, loop included): `next_id()` is"
            f" {one - call_floor:.1f} ns above it, the clock read, the CAS and one int."
        ]
    out += [""]
    rows = [[code_name(r["name"]), f'{r["best_ns"]:.1f}', f'{r["median_ns"]:.1f}', ratio(r["best_ns"], base)] for r in entrants]
    return out + table(["call", "best ns", "median ns", "best / `time.time_ns()`"], rows)


# ---------------------------------------------------------------------------- Node

NODE_BASE = "Date.now()"


NODE_BIGINT_FLOOR = "floor: BigInt(Date.now()) << 22n"


def node(face, res):
    out = ["## Node", ""]
    if face.note():
        out += [face.note(), ""]
    run = face.run()
    subjects = [r for r in face.rows if r["kind"] == "subject"]
    versions = face.versions()
    rounds = f' ({plural(run["rounds"], "round")} of {run["calls"]:,} IDs each, after a warm-up round)' if run else ""
    out += [
        f"Rows: each entrant makes IDs in a loop, entrants taking turns{rounds}; best and median ns per ID, ratio of the best"
        " to `Date.now()`'s. Uncapped layouts (53-bit: 30 / 3 / 20; 63-bit: 38 / 3 / 22, a node id per generator) measure the call; the two preset rows"
        " show their layout's cap. Then 1,000,000 IDs from a fresh instance go into a `Set`: duplicates and throws."
        f"{versions}",
        "",
    ]
    if not subjects:
        return out + ["No figures."]
    by = {r["name"]: r for r in subjects}
    best = lambda name: by.get(name, {}).get("best_ns")
    base = best(NODE_BASE)
    one = best("ferroflake nextId(), system clock")
    core_mask = res.get(CORE_MASK_53)
    targets = [
        at_most("`nextId()`", one, 1.1, base, "`Date.now()`"),
        at_most("leased `nextId()`", best("ferroflake LeasedGenerator nextId(), embedded registry"), 1.1, base, "`Date.now()`"),
        at_most("`nextIdBigInt()`", best("ferroflake nextIdBigInt(), system clock"), 1, best(NODE_BIGINT_FLOOR), "`BigInt(Date.now()) << 22n`"),
        at_most("`nextIdString()`", best("ferroflake nextIdString(), system clock"), 2, one, "`nextId()`"),
        at_most("`mask(id)`", best("ferroflake MaskKeyring mask(id), 53 bits (number)"), 2, core_mask, "the core's `Mask::mask` (53 bits)"),
    ]
    out += ["Targets (system clock): " + "; ".join(targets) + ".", ""]
    rows = []
    for r in subjects:
        timed = r["best_ns"] is not None
        throws = "" if r["throws_in_1m"] is None else f'{r["throws_in_1m"]:,}'
        if timed and r["throws_per_1m_timed"]:
            throws = f'{throws} ({r["throws_per_1m_timed"]:,.0f} in the timed loop)'
        rows.append([
            code_name(r["name"]),
            f'{r["best_ns"]:.1f}' if timed else "",
            f'{r["median_ns"]:.1f}' if timed else "",
            ratio(r["best_ns"], base) if timed else "",
            f'{r["set_ns_per_id"]:,.0f}' if r["set_ns_per_id"] is not None else "",
            "" if r["duplicates"] is None else f'{r["duplicates"]:,}',
            throws,
        ])
    return out + table(["call", "best ns", "median ns", "best / `Date.now()`", "ns/ID into a `Set`", "duplicates in 1M", "throws in 1M"], rows)


# ---------------------------------------------------------------------------- leases

STORES = [("embedded", "embedded (file lock)"), ("etcd", "etcd"), ("redis", "Redis"), ("zookeeper", "ZooKeeper"), ("postgres", "PostgreSQL")]


def leases(res, fencing, stores):
    out = ["## Leases", ""]
    for face in (fencing, stores):
        if face.note():
            out += [f"{face.name}: {face.note()}", ""]
    out += [
        "Rows: `next_id` on a plain `Generator` (the baseline) and on a `LeasedGenerator`, same layout, same run."
        " *Fencing bench*: layout 41 / 4 / 18, lease in the embedded registry (TTL 10 s, renewed every 3.3 s alongside);"
        " criterion median, then a paired median: rounds of 1 M plain calls then 1 M leased calls, ratio per round."
        " *Stores bench*: layout 39 / 8 / 16, system clock; acquire (claim one id) and renew (extend + raise the mark) are"
        " criterion medians per registry, servers on loopback; `next_id` interleaved: every generator live, rounds of 1 M"
        " calls each in turn, median.",
        "",
    ]
    paired = {r["clock"]: r for r in fencing.rows if r.get("kind") == "paired"}
    inter = {r["generator"]: r for r in stores.rows if r.get("kind") == "interleaved"}
    overheads = [r["ratio"] for r in paired.values()] + [r["vs_plain"] for n, r in inter.items() if n != "plain"]
    if overheads:
        worst = max(overheads)
        out += [f"Target: leasing adds ≤ 5 % to `next_id`: at most {100 * (worst - 1):+.1f} % over the rows below {verdict(worst <= 1.05)}.", ""]
    else:
        out += ["Target: leasing adds ≤ 5 % to `next_id`: not measured.", ""]
    rows = []
    for clock, label in (("system_clock", "system clock"), ("fast_clock", "`FastClock`")):
        group = f"fencing/{clock}"
        p = paired.get(clock)
        plain_c, leased_c = res.get((group, "plain next_id")), res.get((group, "leased next_id"))
        if p or plain_c or leased_c:
            rows.append([f"fencing, {label}: plain `Generator`", "", "", ns(plain_c), f'{p["plain_ns"]:.2f}' if p else "", "1.000" if p else ""])
            rows.append([f"fencing, {label}: leased, embedded registry", "", "", ns(leased_c), f'{p["leased_ns"]:.2f}' if p else "", f'{p["ratio"]:.3f}' if p else ""])
    plain_i = inter.get("plain")
    if plain_i or ("next_id", "plain") in res:
        rows.append(["stores: plain `Generator`", "", "", ns(res.get(("next_id", "plain"))), f'{plain_i["median_ns"]:.1f}' if plain_i else "", "1.00" if plain_i else ""])
    for key, label in STORES:
        acquire, renew = res.get(("lease", f"acquire/{key}")), res.get(("lease", f"renew/{key}"))
        crit, i = res.get(("next_id", f"leased/{key}")), inter.get(key)
        if acquire is None and renew is None and crit is None and i is None:
            continue
        rows.append([f"stores: leased, {label}", duration(acquire), duration(renew), ns(crit), f'{i["median_ns"]:.1f}' if i else "", f'{i["vs_plain"]:.2f}' if i else ""])
    if not rows:
        return out + ["No figures."]
    return out + table(["generator", "acquire", "renew", "`next_id` ns (criterion)", "`next_id` ns (paired / interleaved)", "× plain"], rows)


# ---------------------------------------------------------------------------- HTTP

MODES = [("/api/segment/get/bench", "segment"), ("/api/snowflake/get/bench", "snowflake")]
# The servers benches/serve.sh runs, in its order: plain HTTP, a bearer token on every
# request, TLS, TLS with a token. Rows without a variant (older runs) are plain.
VARIANTS = ["plain", "token", "tls", "tls+token"]


def http(face):
    out = ["## ID service (HTTP)", ""]
    if face.note():
        out += [face.note(), ""]
    # wrk's duration (10s, 2m) as prose (10 s, 2 m).
    # The wrk rows; the `cost` rows are the segments-over-HTTP section's.
    wrk_rows = [r for r in face.rows if r.get("kind", "wrk") == "wrk"]
    took = ", " + re.sub(r"([0-9])([a-z]+)$", r"\1 \2", wrk_rows[0]["duration"]) + " per row" if wrk_rows else ""
    if wrk_rows and wrk_rows[0].get("rounds", 1) > 1:
        took += (f' in {wrk_rows[0]["rounds"]} runs, the three routes of a server taking turns (req/s the mean of the'
                 " runs, p50 and p99 their medians)")
    out += [
        f"Rows: `ferroflake serve` (release build, 2 worker threads) on loopback under `wrk -t1 --latency`{took}, wrk on"
        " the same cores. Leaf's two routes against `/v1/constant`, which returns a constant through the same stack (hyper,"
        " the connection's bounds, the token check; answered before axum's router, as a Leaf route is when its ID is"
        " ready at once) without the metrics: the HTTP floor (the baseline) of this machine, at 1 and 32 connections."
        " Each route on four servers in turn: plain HTTP; with a tokens file, each request sending"
        " `Authorization: Bearer`; over TLS (self-signed P-256, connections kept alive: one handshake per"
        " connection); over TLS with a token. A route's ratios are to the constant route of the same server at the"
        " same connections (what issuing costs over that server's HTTP); the constant rows of the token and TLS"
        " servers are compared with the plain floor (what the token or TLS costs).",
        "",
    ]
    if not wrk_rows:
        return out + ["No figures."]
    variant = lambda r: r.get("variant", "plain")
    constant = {(variant(r), r["connections"]): r for r in wrk_rows if r["route"] == "/v1/constant"}
    # What a row is compared with: its server's constant route, or for that route itself
    # the plain floor.
    base = lambda r: constant.get(("plain", r["connections"]) if r["route"] == "/v1/constant" else (variant(r), r["connections"])) or {}
    verdicts = []
    for r in wrk_rows:
        f = base(r)
        if r["route"] == "/v1/constant" or not f:
            continue
        share, tail = r["rps"] / f["rps"], r["p99_us"] / f["p99_us"]
        if share < 0.95 or tail > 1.1:
            mode = dict(MODES).get(r["route"], r["route"])
            verdicts.append(f'{variant(r)} {mode} at {r["connections"]}: {100 * share:.0f} % of the req/s, p99 {tail:.2f}×')
    measured = sum(1 for r in wrk_rows if r["route"] != "/v1/constant" and base(r))
    summary = "not measured" if not measured else (f"met by all {measured} rows {verdict(True)}" if not verdicts else f"not met by {len(verdicts)} of {measured} rows {verdict(False)}: " + "; ".join(verdicts))
    out += ["Targets for each Leaf route on each server, at 1 and 32 connections: ≥ 95 % of its constant route's req/s and p99 ≤ 1.1× its p99: " + summary + ".", ""]
    order = {v: i for i, v in enumerate(VARIANTS)}
    rows = []
    for r in sorted(wrk_rows, key=lambda r: (order.get(variant(r), len(order)), r["connections"], r["route"] != "/v1/constant")):
        f = base(r)
        label = "`/v1/constant` (floor)" if r is constant.get(("plain", r["connections"])) else f'`{r["route"]}`'
        rows.append([variant(r), label, r["connections"], f'{r["rps"]:,.0f}', duration(r["p50_us"] * 1e3), duration(r["p99_us"] * 1e3),
                     ratio(r["rps"], f.get("rps")), ratio(r["p50_us"], f.get("p50_us")), ratio(r["p99_us"], f.get("p99_us"))])
    return out + table(["server", "route", "connections", "req/s", "p50", "p99", "req/s × base", "p50 × base", "p99 × base"], rows)


# ---------------------------------------------------------------------------- segments over HTTP

REMOTE_FACES = [("rust", "Rust", "`KeyHandle::next_id().ok()`"), ("python", "Python", "`SegmentKey.next_id()`"), ("node", "Node", "`SegmentKey.nextId()`")]
LEAF_ROUTE = "/api/segment/get/bench"


def per_million(value, ids):
    return None if value is None or not ids else value * 1e6 / ids


def cpu_time(seconds):
    return f"{seconds:.2f} s" if seconds >= 1 else duration(seconds * 1e9)


def times_fewer(base, value):
    """How many times `value` goes into `base`: `1,234×`, or `0.64×` below 10."""
    if base is None or not value:
        return ""
    share = base / value
    return f"{share:,.0f}×" if share >= 10 else f"{share:.2f}×"


def remote_segments(faces, bench_dir):
    """Segments taken over HTTP against a local SQLite key, per face, and what the service
    spends per million of their IDs against the Leaf route's one request per ID."""
    out = ["## Segments over HTTP (`ferroflake+http://`)", ""]
    found = {
        "rust": next((r for r in read_jsonl(bench_dir / "segment.jsonl") if r["kind"] == "remote"), None),
        "python": next((r for r in faces["python"].rows if r.get("kind") == "remote"), None),
        "node": next((r for r in faces["node"].rows if r.get("kind") == "remote"), None),
    }
    measured = {k: r for k, r in found.items() if r and r.get("status") == "measured"}
    steps = sorted({(r["table_step"], r["step"]) for r in measured.values()})
    step = (f"table step {steps[0][0]:,}, grown to {steps[0][1]:,} by the timed runs" if len(steps) == 1
            else "table step 100,000")
    calls = "; ".join(f"{label}: {call}" for key, label, call in REMOTE_FACES)
    out += [
        "Rows: one client process issues IDs from a key that it takes in whole ranges from a `ferroflake serve` (release"
        " build, segment mode, SQLite store, loopback) through the store address `ferroflake+http://127.0.0.1:PORT/`,"
        " and from a key on a local SQLite file (`SegmentKey`'s own store), on the same machine. Both keys are created"
        " with step 100,000 and opened with the default settings: each range doubles the step, up to 1,000,000"
        " (Leaf's rule; a warm-up takes both keys there), and the next range is fetched in the background once 10 %"
        " of one is used. The two keys take turns in each round, each run issuing many ranges, refills included;"
        " IDs/s is the median of the rounds, the ratio the median of the rounds' HTTP / local ratios. Waits: calls"
        " that found the key's memory empty and waited for a range; where they come near the ranges fetched, the"
        " client outran its refills, and its figure is the time to fetch a range (one segment from each store: the"
        f" segment mode section), not the call's. Calls: {calls}; Python's and Node's in the loops of their tables.",
        "",
    ]
    parts = []
    for key, label, _ in REMOTE_FACES:
        r = measured.get(key)
        parts.append(f"{label} {r['ratio']:.2f}× {verdict(r['ratio'] >= 0.9)}" if r else f"{label} {verdict(None)}")
    out += [f"Target: IDs/s from a segment taken over HTTP ≥ 0.9× a local SQLite key's, same step ({step}): "
            + "; ".join(parts) + ".", ""]
    rows = []
    for key, label, _ in REMOTE_FACES:
        r = found[key]
        if r is None:
            continue
        if r.get("status") != "measured":
            rows.append([label, f'{r.get("status")}: {r.get("detail", "")}', "", "", "", "", "", ""])
            continue
        rows.append([
            label,
            f'{r["rounds"]} × {r["ids_per_run"]:,}',
            f'{r["local_per_second"] / 1e6:.1f}',
            f'{r["remote_per_second"] / 1e6:.1f}',
            f'{r["ratio"]:.2f}',
            f'{r["local_fetches"]:,} / {r["remote_fetches"]:,}',
            f'{r["local_waits"]:,} / {r["remote_waits"]:,}',
            f'{r["errors"]:,}',
        ])
    if rows:
        out += table(["client", "rounds × IDs per run", "local SQLite M IDs/s", "over HTTP M IDs/s", "HTTP / local",
                      "ranges fetched (local / HTTP)", "waits (local / HTTP)", "errors"], rows)
    else:
        out += ["No figures."]

    # The service's cost per million IDs.
    leaf = sorted((r for r in faces["serve"].rows if r.get("kind") == "cost"), key=lambda r: r["connections"])
    out += [
        "",
        "The service's cost per million IDs that clients issued: the HTTP requests it answered"
        " (`ferroflake_http_requests_total` at `/metrics`, its scrapes left out) and its CPU time (`/proc/PID/stat`"
        " utime + stime, in ticks of 1/CLK_TCK s) over the timed HTTP runs above, against the Leaf route"
        f" `GET {LEAF_ROUTE}` on the plain server of the ID service section, one request per ID, loaded by wrk over"
        " that section's runs (wrk's own CPU not counted). The last two columns divide the Leaf route's cheaper row"
        " (the baseline) by each row: how many times fewer requests, and how many times less CPU. A figure of a few"
        " ticks is that coarse.",
        "",
    ]
    cost = []  # (label, ids, requests per 1M, CPU s per 1M, clock ticks counted)
    ticks = lambda r, field: None if r[field] is None or not r.get("clk_tck") else round(r[field] * r["clk_tck"])
    for r in leaf:
        cost.append((f'Leaf route, {plural(r["connections"], "connection")}, wrk', r["ids"], per_million(r["requests"], r["ids"]), per_million(r["cpu_s"], r["ids"]), ticks(r, "cpu_s")))
    leaf_cpu = [c[3] for c in cost if c[3]]
    base_cpu = min(leaf_cpu) if leaf_cpu else None
    base_requests = 1e6 if cost else None
    for key, label, _ in REMOTE_FACES:
        r = measured.get(key)
        if r:
            cost.append((f"`ferroflake+http://`, {label} client", r["service_ids"], per_million(r["service_requests"], r["service_ids"]), per_million(r["service_cpu_s"], r["service_ids"]), ticks(r, "service_cpu_s")))
    if not cost:
        return out + ["No figures."]
    body = []
    for label, ids, requests, cpu, counted in cost:
        body.append([
            label + (" (the baseline)" if cpu is not None and cpu == base_cpu and label.startswith("Leaf") else ""),
            f"{ids:,}",
            "" if requests is None else f"{requests:,.1f}" if requests < 1000 else f"{requests:,.0f}",
            "" if cpu is None else cpu_time(cpu) + ("" if counted is None else f" ({plural(counted, 'tick')})"),
            times_fewer(base_requests, requests),
            times_fewer(base_cpu, cpu),
        ])
    return out + table(["service answering", "IDs", "requests per 1M IDs", "CPU per 1M IDs", "Leaf ÷ this: requests", "Leaf ÷ this: CPU"], body)


# ---------------------------------------------------------------------------- the page


def header(env, faces):
    load = f'{env.get("load_start", "?")} at the start, {env.get("load_end", "?")} at the end'
    out = [
        "# ferroflake benchmarks",
        "",
        f'Machine: {env.get("cpu", "?")}, {env.get("cores", "?")} cores{", virtual machine" if env.get("virtual") else ""},'
        f' {env.get("kernel", "?")}, clocksource {env.get("clocksource") or "?"} (load average {load}).'
        f' Date: {env.get("date_utc", "?")} UTC. Commit: `{env.get("commit", "?")}`. rustc {env.get("rustc", "?")}.',
        f"Every figure below comes from this one run of `{COMMAND}`, which wrote this file (raw output: `target/ferroflake-bench/`)."
        " Ratios are taken within a table, from figures of the same run.",
    ]
    if env.get("quick"):
        out += ["", "**Quick run (`FF_BENCH_QUICK=1`): fewer rounds and shorter runs, figures not for comparison.**"]
    failed = [f.name for f in faces if f.exit not in (0, None)]
    missing = [f.name for f in faces if f.exit is None]
    notes = ([f"Failed in this run: {', '.join(failed)}."] if failed else []) + ([f"Not run: {', '.join(missing)}."] if missing else [])
    if notes:
        out += ["", " ".join(notes)]
    return out


SECTIONS = ("header", "core", "segment", "c", "python", "node", "leases", "http", "remote")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench-dir", type=Path, default=ROOT / "target" / "ferroflake-bench")
    parser.add_argument("--criterion-dir", type=Path, default=ROOT / "target" / "criterion")
    parser.add_argument("--out", default=os.environ.get("FF_BENCH_OUT") or str(ROOT / "BENCHMARKS.md"),
                        help="the file to write, or - for standard output")
    parser.add_argument("--since", type=float, help="the run's start (Unix seconds), if not in run.env")
    parser.add_argument("--sections", default=",".join(SECTIONS), help=f"some of {','.join(SECTIONS)}")
    args = parser.parse_args()
    wanted = args.sections.split(",")
    unknown = [name for name in wanted if name not in SECTIONS]
    if unknown:
        sys.exit(f"unknown sections {unknown}: choose from {','.join(SECTIONS)}")

    env = read_env(args.bench_dir / "run.env")
    if args.since is None and "started" not in env:
        sys.exit(f"{args.bench_dir / 'run.env'} is missing: run benches/all.sh first")
    since = args.since if args.since is not None else float(env["started"])
    res = load_criterion(args.criterion_dir, since)
    res.update(load_criterion(args.bench_dir / "criterion-lease", since))
    faces = {name: Face(args.bench_dir, name) for name in ("core-segment", "c", "python", "node", "lease-fencing", "lease-stores", "serve")}

    make = {
        "header": lambda: header(env, faces.values()),
        "core": lambda: core(res, faces["core-segment"], args.bench_dir),
        "segment": lambda: segment(res, faces["core-segment"], args.bench_dir),
        "c": lambda: c_abi(faces["c"]),
        "python": lambda: python(faces["python"], res),
        "node": lambda: node(faces["node"], res),
        "leases": lambda: leases(res, faces["lease-fencing"], faces["lease-stores"]),
        "http": lambda: http(faces["serve"]),
        "remote": lambda: remote_segments(faces, args.bench_dir),
    }
    sections = [make[name]() for name in SECTIONS if name in wanted]
    text = "\n\n".join("\n".join(lines).strip("\n") for lines in sections) + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
