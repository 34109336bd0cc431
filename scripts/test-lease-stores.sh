#!/usr/bin/env bash
# The lease registries on etcd, Redis, ZooKeeper and PostgreSQL, against real servers
# started here on 127.0.0.1 (scripts/servers/ctl.sh): unit tests, the ferroflake-lease
# conformance suite per server, then the fault tests per server (32 processes racing for
# 16 ids, 8 x 100,000 IDs merged, a SIGSTOPped holder, the server killed and restarted
# mid-run, a first start against nothing). Run scripts/install-deps.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
for tool in etcd etcdctl redis-server redis-cli java protoc; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/install-deps.sh" >&2; exit 1; }
done

# Build everything first, so the servers are not kept waiting.
cargo test -p ferroflake-lease-stores --no-run --quiet

FF_SERVERS_DIR=$(mktemp -d)
export FF_SERVERS_DIR
ctl() { bash scripts/servers/ctl.sh "$@"; }
trap 'ctl stop-all; rm -rf "$FF_SERVERS_DIR"' EXIT
for server in etcd redis zookeeper postgres; do
  ctl start "$server"
done
export FERROFLAKE_TEST_ETCD=$(ctl url etcd)
export FERROFLAKE_TEST_REDIS=$(ctl url redis)
export FERROFLAKE_TEST_ZOOKEEPER=$(ctl url zookeeper)
export FERROFLAKE_TEST_POSTGRES=$(ctl url postgres)
echo "servers up under $FF_SERVERS_DIR ($(( $(date +%s) - start )) s)"

# Unit tests and doctests (the server tests are #[ignore]d here and run below).
cargo test -p ferroflake-lease-stores
# The conformance suite, all four servers at once.
cargo test -p ferroflake-lease-stores --test conformance -- --ignored
# Fault tests: one server at a time, since each ends by killing and restarting its server.
cargo test -p ferroflake-lease-stores --test faults -- --ignored --test-threads=1 --nocapture
echo "suite lease-stores passed in $(( $(date +%s) - start )) s"
