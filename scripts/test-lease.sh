#!/usr/bin/env bash
# The lease suite: the embedded registry against the conformance suite and hostile
# directories (as root: a directory and a link another user prepared), the leased
# generator on the manual clock (fencing, failing and recovering renewals, loss, restarts
# with the clock set back), and the `ferroflake` CLI. The multi-process suite (many
# processes on one registry) runs per registry, the embedded one included, in
# test-lease-stores.sh.
# The CLI's service tests (cli/tests/serve.rs) run in test-serve.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh

# One test file at a time: the embedded registry's conformance suite renews a 600 ms lease
# every 200 ms through a file lock and an fsync, the leased generator's tests a 1 s lease
# every 300 ms, deadlines set with no other file's processes on the two cores.
rust_tests_by_file 'package(ferroflake-lease) | (package(ferroflake-cli) & !binary(/^serve/))'

# The CLI lines of docs/leases.md, as a user types them, in a private lease directory named
# with --lease (the default directory is one fixed per-user path, shared with real use).
# A new registry makes its first claim wait out the lost-records floor (about 12 s): the
# smoke runs in the background while the build below keeps the cores busy.
# The README's command (a) names /var/tmp/ferroflake-leases, which works on a fresh host and
# inside a container alike (the default registry is refused in a container, and CI runs in
# one); it runs here as typed, on the debug build (`cargo run --release` would build the CLI
# once more). Where another user made that directory first, it is refused, saying so.
lease_dir="$(mktemp -d)"
smoke="$(mktemp -d)"
trap 'rm -rf "$lease_dir" "$smoke"' EXIT
rust_build --bins --examples
# Copies: the build below puts its own ferroflake where this build's is.
cp "$rust_bin_dir/ferroflake" "$rust_bin_dir/examples/lease_quickstart" "$smoke/"
ferroflake="$smoke/ferroflake"
readme_smoke() {
  [ "$("$ferroflake" next -n 5 --lease /var/tmp/ferroflake-leases | grep -cE '^[0-9]+$')" = 5 ]
  "$ferroflake" next -n 3 --lease "$lease_dir" >/dev/null
  "$ferroflake" next --format json --lease "$lease_dir" | grep -q '"lease":{"epoch":[0-9]*,"registry":"embedded"}'
  id="$("$ferroflake" next --node 7)"
  "$ferroflake" decode "$id" | grep -q '^node      7$'
  "$ferroflake" layout --layout sonyflake | grep -q 'sequence 8'
  if "$ferroflake" next --lease /dev/null/leases 2>/dev/null; then
    echo "ferroflake next must refuse when no node id can be leased" >&2
    exit 1
  fi
  # The Rust quickstart opens the default registry: in a container (made known by its
  # variable, so that this says the same on a host) it is refused, saying why and what to
  # use instead, and prints no ID.
  local said
  if said="$(container=ferroflake-test "$smoke/lease_quickstart" 2>&1)"; then
    echo "$said"
    echo "the lease quickstart must refuse the default registry in a container" >&2
    exit 1
  fi
  grep -qF "IDs can collide with other containers'" <<<"$said" || { echo "$said"; exit 1; }
}
(set -e; readme_smoke) >"$smoke/log" 2>&1 &
smoke_pid=$!

# The CLI as `cargo install ferroflake-cli` builds it, without the stores: a server
# address names the feature, exits 2, and shows no password. (Its own build: the one
# above has every feature.)
cargo nextest run -p ferroflake-cli --no-fail-fast \
  -E 'test(store_urls_need_the_stores_feature) | test(store_addresses_that_cannot_work_are_refused)'

if ! wait "$smoke_pid"; then
  cat "$smoke/log"
  echo "lease README smoke failed" >&2
  exit 1
fi
echo "lease README smoke: 7 passed, 0 failed"
