#!/usr/bin/env bash
# The lease registries on etcd, Redis, ZooKeeper and PostgreSQL, against real servers
# started here on 127.0.0.1 (scripts/servers/ctl.sh), and the multi-process suite
# (tests/processes.rs) on every registry: first the unit tests and that suite on the
# embedded registry (no server needed), then with the servers up the ferroflake-lease
# conformance suite per server, garbled records refused per server (tests/garbled.rs),
# the multi-process suite per server (32 processes racing for 16 ids, 8 x 100,000 IDs
# merged, 8 processes handing 4 ids over, a SIGSTOPped holder, the server killed and
# restarted mid-run, a first start against nothing, an evicting Redis refused), the fault
# suite per server (tests/faults.rs: a record lost, all records lost, the history
# restored, a replica promoted, a value garbled, under a live holder, in every way each
# store suffers them), then the CLI (concurrent and back-to-back runs). Run
# scripts/install-deps.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh
source scripts/lib.sh
require_tools etcd etcdctl redis-server redis-cli java protoc

# Build everything first, so the servers are not kept waiting (the CLI has every store).
rust_build --bins
ferroflake="$rust_bin_dir/ferroflake"

# Unit tests and the multi-process and fault suites on the embedded registry, before the servers
# start (the server tests are #[ignore]d here and run below). Two at a time: the scenarios
# start up to 32 processes each, on deadlines of a second or two.
rust_tests_by_file 'package(ferroflake-lease-stores)' --test-threads 2
echo "embedded and unit tests passed ($(elapsed) s)"

start_test_servers etcd redis zookeeper postgres

# The conformance suite, one test per check and server, four at a time: more at once
# starve renewals of their sub-second deadlines on two cores.
rust_tests 'package(ferroflake-lease-stores) & binary(conformance)' --run-ignored only --test-threads 4
# Garbled records per server (a mark, epoch, count or record no registry writes): store
# errors, never read as 0. Four at a time: each test has a namespace of its own.
rust_tests 'package(ferroflake-lease-stores) & binary(garbled)' --run-ignored only --test-threads 4
# A failover to a lagging Redis replica (a primary and replica of the test's own), a
# PostgreSQL lease table restored from a dump, and one prefix on two Redis servers of the
# test's own (two registry ids, where the locators read the same), and a Leaf fleet's
# ZooKeeper tree read and its worker ids reserved.
rust_tests 'package(ferroflake-lease-stores) & (binary(redis_failover) | binary(restores) | binary(identities) | binary(leaf_workers))' --run-ignored only
# The multi-process suite per server, two tests at a time, never two on one server: some
# kill and restart their server (test groups in .config/nextest.toml). (--ignored runs
# only the server tests: the embedded ones ran above.)
rust_tests 'package(ferroflake-lease-stores) & binary(processes)' --run-ignored only --test-threads 2
# The fault suite per server, one cell per server at a time (test groups in
# .config/nextest.toml), the four servers side by side: each cell runs two probes.
rust_tests 'package(ferroflake-lease-stores) & binary(faults)' --run-ignored only --test-threads 4

# The CLI on each store: two `ferroflake next --lease URL` at once both issue, with no ID
# in common; an unreachable store is refused with a clear message and exit code.
smoke_dir=$(mktemp -d)
passed=0
# cli_pair NAME URL: two runs at once in a namespace of their own. Each first run waits out
# its new namespace's floor, so the four stores run side by side.
cli_pair() {
  local out="$smoke_dir/$1"
  "$ferroflake" next --lease "$2" -n 20000 >"$out.a" &
  local first=$!
  "$ferroflake" next --lease "$2" -n 20000 >"$out.b"
  wait "$first"
  [ "$(sort -u "$out.a" "$out.b" | wc -l)" = 40000 ] \
    || { echo "CLI on $2: duplicate or missing IDs" >&2; return 1; }
  "$ferroflake" next --lease "$2" --format json | grep -q '"lease":{"epoch":[0-9]*,"registry":"[a-z]*"}' \
    || { echo "CLI on $2: no lease in the JSON output" >&2; return 1; }
}
pairs=()
for store in etcd redis zookeeper postgres; do
  case "$store" in
    etcd) url="$FERROFLAKE_TEST_ETCD/cli-smoke" ;;
    redis) url="$FERROFLAKE_TEST_REDIS?prefix=cli-smoke" ;;
    zookeeper) url="$FERROFLAKE_TEST_ZOOKEEPER/cli-smoke" ;;
    postgres) url="$FERROFLAKE_TEST_POSTGRES?table=cli_smoke" ;;
  esac
  cli_pair "$store" "$url" &
  pairs+=($!)
done
for pair in "${pairs[@]}"; do
  wait "$pair"
  passed=$((passed + 1))
done
for url in etcd://127.0.0.1:1 redis://127.0.0.1:1/0 zk://127.0.0.1:1 postgres://postgres@127.0.0.1:1/postgres; do
  if "$ferroflake" next --lease "$url" 2>"$smoke_dir/err"; then
    echo "CLI on unreachable $url must fail" >&2; exit 1
  fi
  grep -q "registry unreachable" "$smoke_dir/err" || { echo "CLI on $url: unclear error: $(cat "$smoke_dir/err")" >&2; exit 1; }
  passed=$((passed + 1))
done
# Back to back: a release records the final mark as given, so the next run starts at once.
# A first run in each namespace waits out its new-namespace floor (max_ttl + quarantine),
# all four at once; then two runs in a row. Each new holder still waits past the released
# mark plus the skew allowance (LeaseConfig::skew_allowance, 1 s by default), so the pair
# takes about 2 s; before releases recorded the mark as given it took over 20 s.
back=()
for url in "$FERROFLAKE_TEST_ETCD/back" "$FERROFLAKE_TEST_REDIS?prefix=back" \
           "$FERROFLAKE_TEST_ZOOKEEPER/back" "$FERROFLAKE_TEST_POSTGRES?table=back"; do
  "$ferroflake" next --layout js53ms --lease "$url" -n 1 >/dev/null 2>&1 &
  back+=("$url")
done
wait
for url in "${back[@]}"; do
  t0=$(date +%s%N)
  "$ferroflake" next --layout js53ms --lease "$url" -n 1 >/dev/null
  "$ferroflake" next --layout js53ms --lease "$url" -n 1 >/dev/null
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$ms" -lt 3000 ] || { echo "CLI on $url: two back-to-back runs took $ms ms" >&2; exit 1; }
  echo "CLI on $url: two back-to-back runs in $ms ms"
  passed=$((passed + 1))
done
rm -rf "$smoke_dir"
echo "CLI on the stores: $passed passed, 0 failed"
echo "suite lease-stores passed in $(elapsed) s"
