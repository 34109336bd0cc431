#!/usr/bin/env bash
# Runs every core benchmark in ONE `cargo bench` invocation (criterion per-ID and two-thread
# figures, then the long sustained runs), and prints the tables for BENCHMARKS.md.
# Takes about 2 minutes after the build. Results: <target>/ferroflake-bench/{bench.log,tables.md}.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}
out="$target/ferroflake-bench"
mkdir -p "$out"
# Start from a clean slate so the tables hold this run only.
rm -rf "$target"/criterion/{clock,clock_edge,ferroflake_edge,ferroflake_wide,ferroflake_next_ids,ferroflake_next_ids_edge,peer_edge,peer_plain,two_threads}
rm -f "$out/sustained.jsonl"
{ date -u; nproc; uptime; } | tee "$out/environment.txt"
cargo bench -p ferroflake-benches --no-run
# CPU use every 5 s during the run: other work on the machine shows up here.
vmstat -n 5 > "$out/vmstat.txt" &
vmstat_pid=$!
trap 'kill "$vmstat_pid" 2>/dev/null || true' EXIT
FERROFLAKE_BENCH_REPORT="$out/sustained.jsonl" \
  cargo bench -p ferroflake-benches "$@" 2>&1 | tee "$out/bench.log"
uptime | tee -a "$out/environment.txt"
python3 benches/summarize.py "$target/criterion" "$out/sustained.jsonl" | tee "$out/tables.md"
