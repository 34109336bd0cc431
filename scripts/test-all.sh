#!/usr/bin/env bash
# Installs what the tests need and runs every suite, in order. `.ci/run` calls this and
# nothing else. The release artifacts are built once, before the suites that test them
# (C, Python, Node, release); each suite script can also be run on its own after
# install-deps.sh (and, for those four, scripts/release.sh --allow-dirty). Ends with a table
# of each step's wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
timings=()

# Printed however the run ends; a failed step is named below the table.
report() {
  local status=$?
  echo "=== wall time per step (s)"
  printf '%s\n' "${timings[@]}" | awk '{ printf "%-16s %6d\n", $1, $2 }'
  printf '%-16s %6d\n' total "$(( $(date +%s) - start ))"
  [ "$status" -eq 0 ] || echo "=== failed in step: ${current_step:-?}"
  rm -rf "$FERROFLAKE_STATE_DIR"
}
trap report EXIT

# step NAME COMMAND...: runs one step and records its wall time.
step() {
  current_step="$1"
  shift
  echo "=== $current_step ($(( $(date +%s) - start )) s elapsed)"
  local began
  began=$(date +%s)
  "$@"
  timings+=("$current_step $(( $(date +%s) - began ))")
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
step deps-servers servers_ready
for suite in rust c python node lease lease-model lease-stores segment segment-stores serve release; do
  step "$suite" bash "scripts/test-$suite.sh"
done
echo "=== all suites passed in $(( $(date +%s) - start )) s"
