#!/usr/bin/env bash
# The ID service (`ferroflake serve`, crate ferroflake-serve) over real HTTP: every route
# (the Leaf-compatible ones included), bad input, readiness, two servers sharing one
# SQLite store and one lease registry (a million IDs per mode, no duplicate), SIGTERM under
# load, a second signal, a drain that times out; then PostgreSQL, MariaDB and Redis, started
# here: PostgreSQL killed under load and started again, SIGTERM exiting 0 on each, spellings
# of one key on MariaDB opening one key, an emoji key on Leaf's utf8mb3 table refused, and
# clients (the CLI's, and the C, Python and Node packages') issuing from ranges and leases
# taken through two services on PostgreSQL and etcd while the services are killed and
# paused in turn. Run scripts/install-deps.sh and scripts/release.sh --allow-dirty first.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh
source scripts/dist.sh
source scripts/lib.sh
need_dist
require_tools psql mariadbd mariadb redis-server protoc

# Unit tests, routes, readiness and the two-server run, in the test processes; then the
# binary as a child process (cli/tests/serve*.rs): SIGTERM under load, a second signal, a
# drain timeout, SIGHUP reloads, TLS, connection bounds.
rust_tests_by_file 'package(ferroflake-serve) | package(ferroflake-remote) | (package(ferroflake-cli) & binary(/^serve/))'

faces=$(mktemp -d)
at_exit 'rm -rf "$faces"'

# The faces' clients for the process run (cli/tests/remote_processes.rs), on the packages
# that ship (scripts/release.sh): the C library's tarball, the Python wheel in a venv, the
# npm tarballs in a consumer folder.
echo "--- the C, Python and Node clients, from dist/"
mkdir -p "$faces/c" "$faces/node"
tar -xzf "$dist"/ferroflake-c-*.tar.gz -C "$faces/c"
c_prefix=$(echo "$faces"/c/ferroflake-c-*/)
# The C library with the stores: the Rust tests' build's, as scripts/test-c.sh links it
# (the tarball's leaves the stores out).
rust_build --lib
# shellcheck disable=SC2046 # pkg-config output is meant to be split into words
gcc -std=c99 -Wall -Wextra -Werror -O1 -I"$c_prefix/include" ffi-c/tests/remote_client.c \
  "$rust_bin_dir/libferroflake_ffi.a" $(PKG_CONFIG_PATH="$c_prefix/lib/pkgconfig" \
  pkg-config --libs --static ferroflake | sed 's/-L[^ ]*//; s/-lferroflake//') -lz \
  -o "$faces/c/remote_client"
python3 -m venv "$faces/venv"
"$faces/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  "$dist"/python/ferroflake-*-cp39-abi3-*.whl
(cd "$faces/node" && npm init -y >/dev/null &&
  npm install --silent --no-audit --no-fund "$dist"/npm/ferroflake-*.tgz)
cp bindings-node/test/fixtures/remote-client.mjs "$faces/node/"
FERROFLAKE_TEST_FACE_CLIENTS=$(python3 -c 'import json, sys; print(json.dumps({
  "c": [sys.argv[1] + "/c/remote_client"],
  "python": [sys.argv[1] + "/venv/bin/python", sys.argv[2] + "/bindings-python/tests/remote_client.py"],
  "node": ["node", sys.argv[1] + "/node/remote-client.mjs"]}))' "$faces" "$(pwd)")
export FERROFLAKE_TEST_FACE_CLIENTS
start_test_servers postgres mysql redis etcd
rust_tests '(package(ferroflake-serve) & (binary(store_outage) | binary(keys))) | (package(ferroflake-cli) & (binary(/^serve/) | binary(remote_processes)))' \
  --run-ignored only --no-capture
echo "serve passed in $(elapsed) s"
