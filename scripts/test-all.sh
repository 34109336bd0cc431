#!/usr/bin/env bash
# Installs what the tests need and runs every suite. `.ci/run` calls this and
# nothing else. The release artifacts are built once, before the suites that test them
# (C, Python, Node, serve's process run, release); each suite script can also be run on its
# own after install-deps.sh (and, for those five, scripts/release.sh --allow-dirty). Ends with a table
# of each step's wall time and CPU time (a step whose CPU time is far below twice its wall
# time mostly waits: on servers, timeouts or the network).
#
# Two lanes: the suites that compile and check on their own (the release suite's builds
# from source, the lease model) run in the background at the lowest priority, from the
# release build on, while the rest run in order. Those wait on servers, TTLs and child
# processes for much of their time, and at normal priority they keep the CPU whenever
# they need it, so their deadlines see the load they would alone.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
timings=()

# Printed however the run ends; a failed step is named below the table.
report() {
  local status=$?
  echo "=== wall time per step (s)"
  printf '%-16s %6s %6s\n' step wall cpu
  printf '%s\n' "${timings[@]}" | awk '{ printf "%-16s %6s %6s\n", $1, $2, $3 }'
  [ ! -s "$lane_timings" ] || awk '{ printf "%-16s %6s %6s\n", $1 " (bg)", $2, $3 }' "$lane_timings"
  printf '%-16s %6d\n' total "$(( $(date +%s) - start ))"
  [ "$status" -eq 0 ] || echo "=== failed in step: ${current_step:-?}"
  if [ -n "${lane_pid:-}" ] && kill -0 "$lane_pid" 2>/dev/null; then
    kill -- "-$lane_pid" 2>/dev/null || true
  fi
  rm -f "$lane_timings" "$lane_log" "$lane_cpu" "$cpu_file" "$cpu_times" "$cpu_times.bg"
  rm -rf "$FERROFLAKE_STATE_DIR"
}
trap report EXIT

# cpu_of COMMAND...: runs COMMAND in a subshell and exits with its status, after writing
# to fd 3 the CPU seconds (user + system) of the processes it started. `times` there counts
# the subshell's children only (not the background lane's, whichever step that lane ends
# in), and it must not run in a pipeline, which would be a subshell of its own.
cpu_of() (
  status=0
  "$@" || status=$?
  times >"$cpu_times"
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/)
                 printf "%d\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$cpu_times" >&3
  exit "$status"
)

# step NAME COMMAND...: runs one step and records its wall time, and its CPU time unless
# it is one of this script's functions (which wait on this shell's background jobs).
step() {
  current_step="$1"
  shift
  echo "=== $current_step ($(( $(date +%s) - start )) s elapsed)"
  local began cpu=-
  began=$(date +%s)
  if [ "$(type -t "$1")" = function ]; then
    "$@"
  else
    cpu_of "$@" 3>"$cpu_file"
    cpu=$(cat "$cpu_file")
  fi
  timings+=("$current_step $(( $(date +%s) - began )) $cpu")
}
cpu_file=$(mktemp)
cpu_times=$(mktemp)

# background_lane SUITE...: the suites in order, each one's wall and CPU time appended to
# $lane_timings; stops at the first that fails.
lane_timings=$(mktemp)
lane_log=$(mktemp)
lane_cpu=$(mktemp)
background_lane() {
  local suite began
  for suite in "$@"; do
    echo "=== $suite (background, $(( $(date +%s) - start )) s elapsed)"
    began=$(date +%s)
    cpu_of bash "scripts/test-$suite.sh" 3>"$lane_cpu" || { echo "=== background suite $suite failed"; return 1; }
    echo "$suite $(( $(date +%s) - began )) $(cat "$lane_cpu")" >>"$lane_timings"
  done
}

# This host's record of the segment ranges it took (ferroflake_segment::host_record), for
# this run only: the stores the tests open are temporary, and the records of thousands of
# them would pile up in the caller's state directory.
FERROFLAKE_STATE_DIR=$(mktemp -d)
export FERROFLAKE_STATE_DIR

step deps bash scripts/install-deps.sh build
# The servers' packages install while the lint and release builds run: none of those
# needs them, and apt-get's downloads and unpacking wait on other things than the compiler.
servers_log=$(mktemp)
bash scripts/install-deps.sh servers >"$servers_log" 2>&1 &
servers_pid=$!
servers_ready() {
  local status=0
  wait "$servers_pid" || status=$?
  cat "$servers_log"
  return "$status"
}
step lint bash scripts/test-lint.sh
step release-build bash scripts/release.sh --allow-dirty
# A process group of its own (job control on), so that a failed run can stop all of it.
set -m
nice -n 19 bash -c "$(declare -f cpu_of background_lane); start=$start; \
  lane_timings=$lane_timings; lane_cpu=$lane_cpu; cpu_times=$cpu_times.bg; background_lane release lease-model" >"$lane_log" 2>&1 &
lane_pid=$!
set +m
background_done() {
  local status=0
  wait "$lane_pid" || status=$?
  cat "$lane_log"
  return "$status"
}
step deps-servers servers_ready
for suite in rust c python node lease lease-stores segment segment-stores serve; do
  step "$suite" bash "scripts/test-$suite.sh"
done
step background background_done
echo "=== all suites passed in $(( $(date +%s) - start )) s"
