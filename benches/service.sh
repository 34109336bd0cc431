#!/usr/bin/env bash
# A `ferroflake serve` (release build, as benches/serve.sh builds it) for the benches that
# take segments through the service's store routes: segment mode only, a SQLite store in a
# folder of its own, no tokens (loopback), a port the kernel picks, read from its `started`
# log line (scripts/servers/service.sh's serve_on_a_free_port, as for the tests). Each bench creates its own
# keys through the service's admin route.
#
# Sourced: start_bench_service sets and exports
#   FERROFLAKE_BENCH_SERVICE      the store address, ferroflake+http://127.0.0.1:PORT/
#   FERROFLAKE_BENCH_SERVICE_PID  the service's process id, whose /proc/PID/stat utime +
#                                 stime the benches read before and after their runs
# and stop_bench_service stops it with SIGTERM and waits for its exit.
# Run: `bash benches/service.sh COMMAND...` runs COMMAND with the service around it and
# exits with COMMAND's status.

bench_service_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bench_service_pid=
bench_service_dir=

source "$bench_service_root/scripts/servers/service.sh"

start_bench_service() {
  local bin
  (cd "$bench_service_root" && cargo build --release -q -p ferroflake-cli) || return 1
  bin="$(cd "$bench_service_root" && bash benches/target-dir.sh)/release/ferroflake"
  bench_service_dir=$(mktemp -d)
  local status=0
  serve_on_a_free_port "$bin" "$bench_service_dir/log" --modes segment \
    --store "$bench_service_dir/segments.db" || status=$?
  bench_service_pid=$served_pid
  if [ "$status" -ne 0 ]; then
    stop_bench_service
    return 1
  fi
  export FERROFLAKE_BENCH_SERVICE="ferroflake+http://$served_addr/"
  export FERROFLAKE_BENCH_SERVICE_PID=$bench_service_pid
  echo "--- a ferroflake service for the bench at $FERROFLAKE_BENCH_SERVICE (pid $bench_service_pid)"
}

stop_bench_service() {
  if [ -n "$bench_service_pid" ]; then
    kill "$bench_service_pid" 2>/dev/null || true
    wait "$bench_service_pid" 2>/dev/null || true
    bench_service_pid=
  fi
  [ -z "$bench_service_dir" ] || rm -rf "$bench_service_dir"
  bench_service_dir=
  unset FERROFLAKE_BENCH_SERVICE FERROFLAKE_BENCH_SERVICE_PID
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  [ $# -gt 0 ] || { echo "usage: bash benches/service.sh COMMAND..." >&2; exit 2; }
  trap stop_bench_service EXIT
  start_bench_service
  set +e
  "$@"
  status=$?
  set -e
  exit "$status"
fi
