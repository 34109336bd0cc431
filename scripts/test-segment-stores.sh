#!/usr/bin/env bash
# Segment stores on real servers started here on 127.0.0.1 (scripts/servers/ctl.sh):
# PostgreSQL, MariaDB (MySQL's protocol) and Redis. Unit tests and the SQLite process tests,
# then per server: the store conformance suite, a Leaf table filled by hand, 4 processes x
# 2 threads on a step of 10, SIGKILL mid-segment then restart, give-back on shutdown; the
# SQL servers killed mid-run (errors, then recovery, no duplicate); Redis flushed, restarted
# and evicting (it must fail closed). Run scripts/install-deps.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
for tool in redis-server redis-cli mariadbd mariadb psql; do
  command -v "$tool" >/dev/null || { echo "missing $tool: run scripts/install-deps.sh" >&2; exit 1; }
done

# Build everything first, so the servers are not kept waiting.
cargo test -p ferroflake-segment-stores --no-run --quiet

FF_SERVERS_DIR=$(mktemp -d)
export FF_SERVERS_DIR
ctl() { bash scripts/servers/ctl.sh "$@"; }
trap 'ctl stop-all; rm -rf "$FF_SERVERS_DIR"' EXIT
for server in postgres mysql redis; do
  ctl start "$server"
done
export FERROFLAKE_TEST_POSTGRES=$(ctl url postgres)
export FERROFLAKE_TEST_MYSQL=$(ctl url mysql)
export FERROFLAKE_TEST_REDIS=$(ctl url redis)
echo "servers up under $FF_SERVERS_DIR ($(( $(date +%s) - start )) s)"

# Unit tests, doctests and the SQLite tests (the server tests are #[ignore]d here).
cargo test -p ferroflake-segment-stores
# Every server test. The ones that kill, flush or reconfigure a server run one at a time,
# after the rest.
cargo test -p ferroflake-segment-stores --test conformance --test leaf_table --test processes \
  -- --ignored --skip server_killed
cargo test -p ferroflake-segment-stores --test processes -- --ignored --test-threads=1 --nocapture server_killed
cargo test -p ferroflake-segment-stores --test redis_faults -- --ignored --test-threads=1 --nocapture
echo "segment stores passed in $(( $(date +%s) - start )) s"
