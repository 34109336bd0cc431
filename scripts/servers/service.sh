#!/usr/bin/env bash
# Sourced by the face suites (test-c.sh, test-python.sh, test-node.sh): a ferroflake
# service on 127.0.0.1 for the tests that take segments through one, its address in
# FERROFLAKE_TEST_SERVICE (ferroflake+http://127.0.0.1:PORT/). The command is built as the
# Rust suite builds it (scripts/rust-tests.sh), so after that suite nothing is compiled.
# The service keeps its SQLite store and embedded registry in a folder of its own, listens
# on a port the kernel picks, and takes no tokens (loopback). stop_test_service, which the
# suite calls on exit, stops it with SIGTERM and waits for its exit.

test_service_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
test_service_pid=
test_service_dir=

# serve_on_a_free_port BIN LOG ARGS...: starts `BIN serve --listen 127.0.0.1:0 ARGS...`
# in the background, its JSON log in LOG, and sets served_pid, and served_addr (host:port)
# once its `started` line names the port, within 30 s. Returns 1, with the log shown, if
# it never does.
serve_on_a_free_port() {
  local bin=$1 log=$2
  shift 2
  served_addr=
  "$bin" serve --listen 127.0.0.1:0 "$@" --log-format json >"$log" 2>&1 &
  served_pid=$!
  for _ in $(seq 1 300); do
    served_addr=$(grep '"event":"started"' "$log" | grep -o '"addr":"[0-9.:]*"' |
      head -1 | grep -o '127\.0\.0\.1:[0-9]*' || true)
    [ -n "$served_addr" ] && return 0
    kill -0 "$served_pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "the service did not start:" >&2
  cat "$log" >&2
  return 1
}

start_test_service() {
  local bin
  bin=$(
    source "$test_service_root/scripts/rust-tests.sh"
    cd "$test_service_root"
    rust_build --bin ferroflake
    echo "$rust_bin_dir/ferroflake"
  )
  test_service_dir=$(mktemp -d)
  local status=0
  serve_on_a_free_port "$bin" "$test_service_dir/log" --store "$test_service_dir/segments.db" \
    --lease "$test_service_dir/leases" || status=$?
  # Known to stop_test_service even if it never said where it listens.
  test_service_pid=$served_pid
  [ "$status" -eq 0 ] || return 1
  export FERROFLAKE_TEST_SERVICE="ferroflake+http://$served_addr/"
  echo "--- a ferroflake service for the tests at $FERROFLAKE_TEST_SERVICE"
}

stop_test_service() {
  if [ -n "$test_service_pid" ]; then
    kill "$test_service_pid" 2>/dev/null || true
    wait "$test_service_pid" 2>/dev/null || true
    test_service_pid=
  fi
  [ -z "$test_service_dir" ] || rm -rf "$test_service_dir"
}
