#!/usr/bin/env bash
# Installs the Debian packages the test suites need: the lease and segment stores' servers
# (etcd, Redis, ZooKeeper, PostgreSQL, MariaDB), protoc
# (etcd-client's build), valgrind, pkg-config and g++ (C tests) and libfaketime
# (whole-process clock steps).
# Rust (with cargo-nextest), Python 3 and Node/npm come with the machine; cargo-nextest,
# which runs the Rust suites, is installed from crates.io where it is missing.
#
# Usage: scripts/install-deps.sh [build|servers|all]   (default: all)
#   build    what compiling the workspace needs (protoc, pkg-config, g++) and cargo-nextest
#   servers  the rest: the store servers, valgrind, faketime. scripts/test-all.sh installs
#            these in the background while the lint and release builds run, since nothing
#            before the suites needs them; apt-get and the compiler then share the wait.
set -euo pipefail
part="${1:-all}"
case "$part" in
  build) pairs="protoc:protobuf-compiler pkg-config:pkg-config g++:g++" ;;
  servers) pairs="etcd:etcd-server etcdctl:etcd-client redis-server:redis-server psql:postgresql
                  valgrind:valgrind faketime:faketime mariadbd:mariadb-server" ;;
  all) pairs="protoc:protobuf-compiler pkg-config:pkg-config g++:g++ etcd:etcd-server
              etcdctl:etcd-client redis-server:redis-server psql:postgresql valgrind:valgrind
              faketime:faketime mariadbd:mariadb-server" ;;
  *) echo "usage: scripts/install-deps.sh [build|servers|all]" >&2; exit 2 ;;
esac
need=()
for pair in $pairs; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
if [ "$part" != build ]; then
  [ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeperd)
  [ -d /usr/lib/postgresql ] || need+=(postgresql)
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
if [ "$part" != servers ] && ! cargo nextest --version >/dev/null 2>&1; then
  echo "installing: cargo-nextest (crates.io)"
  cargo install --locked --quiet cargo-nextest --version 0.9.143
fi
echo "deps ready ($part)"
