#!/usr/bin/env bash
# Runs every benchmark in ONE `cargo bench` invocation: the core's criterion per-ID and
# two-thread figures, the long sustained runs, then segment mode (`benches/segment.rs`), and
# prints their tables as BENCHMARKS.md has them (benches/report.py). Takes about 4 minutes
# after the build.
# Results: <target>/ferroflake-bench/{bench.log,tables.md}.
#
# Segment mode measures its server stores (PostgreSQL, MySQL, Redis) only when their
# FERROFLAKE_TEST_* addresses are set; to start test servers for the run:
#   bash scripts/servers/with-servers.sh bash benches/run.sh
# Segment mode also takes segments over HTTP from a `ferroflake serve` that this script
# starts (benches/service.sh) for the run.
# Arguments go to `cargo bench`: `bash benches/run.sh --bench segment` runs segment mode only.
set -euo pipefail
cd "$(dirname "$0")/.."
# The same target directory as the other bench scripts use (absolute).
target=$(bash benches/target-dir.sh)
export CARGO_TARGET_DIR="$target"
out="$target/ferroflake-bench"
mkdir -p "$out"
# Start from a clean slate so the tables hold this run only.
rm -rf "$target"/criterion/{clock,clock_edge,ferroflake_edge,ferroflake_wide,ferroflake_next_ids,ferroflake_next_ids_edge,mask,peer_edge,peer_plain,two_threads}
rm -rf "$target"/criterion/{segment_one_thread,segment_one_thread_edge,segment_two_threads,segment_fetch}
rm -f "$out/sustained.jsonl" "$out/segment.jsonl"
# Criterion results older than this are another run's.
started=$(date +%s)
{ date -u; nproc; uptime; } | tee "$out/environment.txt"
cargo bench -p ferroflake-benches --no-run
source benches/service.sh
# CPU use every 5 s during the run: other work on the machine shows up here.
vmstat -n 5 > "$out/vmstat.txt" &
vmstat_pid=$!
trap 'kill "$vmstat_pid" 2>/dev/null || true; stop_bench_service' EXIT
start_bench_service
FERROFLAKE_BENCH_REPORT="$out/sustained.jsonl" FERROFLAKE_SEGMENT_REPORT="$out/segment.jsonl" \
  cargo bench -p ferroflake-benches "$@" 2>&1 | tee "$out/bench.log"
uptime | tee -a "$out/environment.txt"
# This script ran to its end: all.sh writes its own status over this one afterwards.
echo 0 >"$out/core-segment.status"
python3 benches/report.py --bench-dir "$out" --criterion-dir "$target/criterion" \
  --since "$started" --sections core,segment --out - | tee "$out/tables.md"
