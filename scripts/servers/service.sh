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

start_test_service() {
  local bin addr=
  bin=$(
    source "$test_service_root/scripts/rust-tests.sh"
    cd "$test_service_root"
    rust_build --bin ferroflake
    echo "$rust_bin_dir/ferroflake"
  )
  test_service_dir=$(mktemp -d)
  "$bin" serve --listen 127.0.0.1:0 --store "$test_service_dir/segments.db" \
    --lease "$test_service_dir/leases" --log-format json >"$test_service_dir/log" 2>&1 &
  test_service_pid=$!
  # Its `started` line names the port; at most 30 s.
  for _ in $(seq 1 300); do
    addr=$(grep '"event":"started"' "$test_service_dir/log" | grep -o '"addr":"[0-9.:]*"' |
      head -1 | grep -o '127\.0\.0\.1:[0-9]*' || true)
    [ -n "$addr" ] && break
    kill -0 "$test_service_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$addr" ]; then
    echo "the test service did not start:" >&2
    cat "$test_service_dir/log" >&2
    return 1
  fi
  export FERROFLAKE_TEST_SERVICE="ferroflake+http://$addr/"
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
