#!/usr/bin/env bash
# Every benchmark of the project, one face after the other, then BENCHMARKS.md written from
# that one run by benches/report.py:
#
#   core + segment  benches/run.sh (criterion, long runs; segment stores on test servers)
#   c               ffi-c/bench/run.sh
#   python          bindings-python/bench/run.sh
#   node            bindings-node/bench/bench.mjs (after a release build of the addon)
#   lease-fencing   cargo bench -p ferroflake-lease --bench fencing
#   lease-stores    cargo bench -p ferroflake-lease-stores --bench stores (test servers)
#   serve           benches/serve.sh (wrk against `ferroflake serve`)
#
# Segment mode, Python and Node also take segments over HTTP (`ferroflake+http://`) from a
# `ferroflake serve` that benches/service.sh starts around each of them.
#
#   bash benches/all.sh                      # the full run; wants a quiet machine
#   FF_BENCH_QUICK=1 bash benches/all.sh     # fewer rounds and shorter runs: checks the
#                                            # pipeline end to end, figures not for comparison
#   FF_BENCH_OUT=/tmp/B.md bash benches/all.sh   # write the report there, not BENCHMARKS.md
#
# Each face's output goes to <target>/ferroflake-bench/<face>.log, its figures as JSON lines
# to <face>.jsonl (lease criterion figures under criterion-lease/), its exit status and
# duration to <face>.status, the machine and commit to run.env. A face that fails does not
# stop the others; the report says which failed, and the script then exits non-zero.
# The test servers (scripts/servers/with-servers.sh) run only around the two faces that use
# them, at ports shifted by FF_PORT_OFFSET (default 600) so they do not clash with tests.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
case ${FF_BENCH_QUICK:-0} in 0 | "") quick= ;; *) quick=1 ;; esac
report_out=${FF_BENCH_OUT:-$root/BENCHMARKS.md}
export FF_PORT_OFFSET=${FF_PORT_OFFSET:-600}

# The same target directory as the other bench scripts use (absolute).
target=$(bash benches/target-dir.sh)
export CARGO_TARGET_DIR="$target"
out="$target/ferroflake-bench"
rm -rf "$out"
mkdir -p "$out"

# Packages: the test servers (as the tests install them) and wrk for the HTTP face.
bash scripts/install-deps.sh
if ! command -v wrk >/dev/null 2>&1; then
  echo "installing: wrk"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq wrk >/dev/null
fi

# Rounds and durations per face: the full run's, or the quick run's.
if [ -n "$quick" ]; then
  criterion_args=(-- --quick)  # criterion samples only until its estimate settles
  c_rounds=1; c_iterations=200000
  python_args=(--rounds 3 --calls 10000)
  node_rounds=2
  serve_duration=2s
else
  criterion_args=()
  c_rounds=7; c_iterations=1000000
  python_args=(--rounds 15)
  node_rounds=7
  serve_duration=10s
fi

# What the report's header names: where, when, what, and how.
commit=$(git rev-parse --short HEAD)
# Tracked changes other than the report itself make the measured tree differ from HEAD.
if [ -n "$(git status --porcelain --untracked-files=no -- . ':(exclude)BENCHMARKS.md')" ]; then
  commit="$commit+dirty"
fi
{
  echo "started=$(date -u +%s)"
  echo "date_utc=$(date -u '+%Y-%m-%d %H:%M')"
  echo "commit=$commit"
  echo "cpu=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "cores=$(nproc)"
  echo "kernel=$(uname -sr)"
  echo "virtual=$(grep -qw hypervisor /proc/cpuinfo && echo yes)"
  echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
  echo "rustc=$(rustc --version | cut -d' ' -f2)"
  echo "quick=$quick"
  echo "load_start=$(cut -d' ' -f1 /proc/loadavg)"
} >"$out/run.env"

failed=()
# run_face NAME COMMAND...: runs one face, its output to the terminal and NAME.log.
run_face() {
  local face=$1 began=$SECONDS rc
  shift
  echo "=== $face: $* ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
  set +e
  "$@" 2>&1 | tee "$out/$face.log"
  rc=${PIPESTATUS[0]}
  set -e
  echo "$rc $((SECONDS - began))" >"$out/$face.status"
  if [ "$rc" != 0 ]; then
    echo "=== $face failed (exit $rc), see $out/$face.log"
    failed+=("$face")
  fi
}

servers=scripts/servers/with-servers.sh

core_segment() { bash "$servers" bash benches/run.sh "${criterion_args[@]}"; }

c_abi() {
  FERROFLAKE_BENCH_REPORT="$out/c.jsonl" FERROFLAKE_BENCH_ITERATIONS=$c_iterations \
    bash ffi-c/bench/run.sh "$c_rounds"
}

python_face() {
  FERROFLAKE_BENCH_REPORT="$out/python.jsonl" bash bindings-python/bench/run.sh "${python_args[@]}"
}

# The release addon, built as the package's install script builds it: the .node file next
# to index.js, the committed index.js and index.d.ts left alone. The napi CLI comes from
# `npm install` as scripts/test-node.sh gets it; the bench's peers from their lock file.
node_face() {
  (cd bindings-node && npm install --no-audit --no-fund --ignore-scripts &&
    node_modules/.bin/napi build --platform --release --no-js --dts target/bench/index.d.ts)
  (cd bindings-node/bench && npm ci --no-audit --no-fund &&
    FERROFLAKE_BENCH_REPORT="$out/node.jsonl" ROUNDS=$node_rounds \
      bash "$root/benches/service.sh" node --expose-gc bench.mjs)
}

lease_fencing() {
  FERROFLAKE_BENCH_REPORT="$out/lease-fencing.jsonl" CRITERION_HOME="$out/criterion-lease" \
    cargo bench -p ferroflake-lease --bench fencing "${criterion_args[@]}"
}

lease_stores() {
  FERROFLAKE_BENCH_REPORT="$out/lease-stores.jsonl" CRITERION_HOME="$out/criterion-lease" \
    bash "$servers" cargo bench -p ferroflake-lease-stores --bench stores "${criterion_args[@]}"
}

serve_face() {
  FERROFLAKE_BENCH_REPORT="$out/serve.jsonl" DURATION=$serve_duration bash benches/serve.sh
}

began=$SECONDS
run_face core-segment core_segment
run_face c c_abi
run_face python python_face
run_face node node_face
run_face lease-fencing lease_fencing
run_face lease-stores lease_stores
run_face serve serve_face
{
  echo "load_end=$(cut -d' ' -f1 /proc/loadavg)"
  echo "seconds=$((SECONDS - began))"
} >>"$out/run.env"

python3 benches/report.py --bench-dir "$out" --criterion-dir "$target/criterion" --out "$report_out"
echo "=== report: $report_out ($((SECONDS - began)) s of benchmarks)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "=== failed faces: ${failed[*]}" >&2
  exit 1
fi
