#!/usr/bin/env bash
# Installs the Debian packages the test suites need: the lease and segment stores' servers
# (etcd, Redis, ZooKeeper, PostgreSQL, MariaDB), protoc
# (etcd-client's build), valgrind, pkg-config and g++ (C tests) and libfaketime
# (whole-process clock steps).
# Rust (with cargo-nextest), Python 3 and Node/npm come with the machine; cargo-nextest,
# which runs the Rust suites, is installed from crates.io where it is missing.
set -euo pipefail
need=()
for pair in etcd:etcd-server etcdctl:etcd-client redis-server:redis-server \
            psql:postgresql protoc:protobuf-compiler valgrind:valgrind faketime:faketime \
            pkg-config:pkg-config g++:g++ mariadbd:mariadb-server; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
[ -f /usr/share/java/zookeeper.jar ] || need+=(zookeeperd)
[ -d /usr/lib/postgresql ] || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! cargo nextest --version >/dev/null 2>&1; then
  echo "installing: cargo-nextest (crates.io)"
  cargo install --locked --quiet cargo-nextest --version 0.9.143
fi
echo "deps ready"
