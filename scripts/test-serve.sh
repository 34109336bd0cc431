#!/usr/bin/env bash
# The ID service (`ferroflake serve`, crate ferroflake-serve) over real HTTP: every route
# (the Leaf-compatible ones included), bad input, readiness, two servers sharing one
# SQLite store and one lease registry (a million IDs per mode, no duplicate), SIGTERM under
# load, a second signal, a drain that times out; then PostgreSQL, MariaDB and Redis, started
# here: PostgreSQL killed under load and started again, SIGTERM exiting 0 on each, spellings
# of one key on MariaDB opening one key, an emoji key on Leaf's utf8mb3 table refused, and
# clients issuing from ranges and leases taken through two services on PostgreSQL and etcd
# while the services are killed and paused in turn. Run scripts/install-deps.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh
start=$(date +%s)
for tool in psql mariadbd mariadb redis-server protoc; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/install-deps.sh" >&2; exit 1; }
done

# Unit tests, routes, readiness and the two-server run, in the test processes; then the
# binary as a child process (cli/tests/serve.rs): SIGTERM under load, a second signal, a
# drain timeout.
rust_tests_by_file 'package(ferroflake-serve) | package(ferroflake-remote) | (package(ferroflake-cli) & binary(serve))'

FF_SERVERS_DIR=$(mktemp -d)
export FF_SERVERS_DIR
ctl() { bash scripts/servers/ctl.sh "$@"; }
trap 'ctl stop-all; rm -rf "$FF_SERVERS_DIR"' EXIT
for server in postgres mysql redis etcd; do
  ctl start "$server"
done
export FERROFLAKE_TEST_ETCD=$(ctl url etcd)
export FERROFLAKE_TEST_POSTGRES=$(ctl url postgres)
export FERROFLAKE_TEST_MYSQL=$(ctl url mysql)
export FERROFLAKE_TEST_REDIS=$(ctl url redis)
rust_tests '(package(ferroflake-serve) & (binary(store_outage) | binary(keys))) | (package(ferroflake-cli) & (binary(serve) | binary(remote_processes)))' \
  --run-ignored only --no-capture
echo "serve passed in $(( $(date +%s) - start )) s"
