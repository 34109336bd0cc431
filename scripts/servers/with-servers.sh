#!/usr/bin/env bash
# Runs a command with the five test servers up (see ctl.sh), their addresses
# in FERROFLAKE_TEST_{ETCD,REDIS,ZOOKEEPER,POSTGRES,MYSQL}, and stops them afterwards.
#   bash scripts/servers/with-servers.sh cargo bench -p ferroflake-lease-stores --bench stores
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: with-servers.sh COMMAND [ARGS...]" >&2; exit 64; }
ctl="$(cd "$(dirname "$0")" && pwd)/ctl.sh"
FF_SERVERS_DIR=$(mktemp -d)
export FF_SERVERS_DIR
trap 'bash "$ctl" stop-all; rm -rf "$FF_SERVERS_DIR"' EXIT
for server in etcd redis zookeeper postgres mysql; do
  bash "$ctl" start "$server"
done
FERROFLAKE_TEST_ETCD=$(bash "$ctl" url etcd)
FERROFLAKE_TEST_REDIS=$(bash "$ctl" url redis)
FERROFLAKE_TEST_ZOOKEEPER=$(bash "$ctl" url zookeeper)
FERROFLAKE_TEST_POSTGRES=$(bash "$ctl" url postgres)
FERROFLAKE_TEST_MYSQL=$(bash "$ctl" url mysql)
export FERROFLAKE_TEST_ETCD FERROFLAKE_TEST_REDIS FERROFLAKE_TEST_ZOOKEEPER FERROFLAKE_TEST_POSTGRES FERROFLAKE_TEST_MYSQL
"$@"
