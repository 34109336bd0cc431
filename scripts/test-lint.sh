#!/usr/bin/env bash
# Keeps the house honest across every crate: formatting, clippy (all targets, all features,
# warnings are errors), rustdoc (warnings are errors), and generated files that must match
# their generators (testdata/vectors.json here; include/ferroflake.h in test-c.sh).
# The stores feature (cli, lease/stores) needs protoc, from install-deps.sh. The bindings
# crates (bindings-python, bindings-node) are checked like the others: clippy and rustdoc
# need neither maturin nor napi.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "--- cargo fmt --all --check"
cargo fmt --all --check

echo "--- cargo clippy --workspace --all-targets --all-features -- -D warnings"
cargo clippy --workspace --all-targets --all-features -- -D warnings

echo "--- cargo doc --workspace --no-deps --all-features (rustdoc warnings are errors)"
# --all-features: the selection clippy used, so the dependencies' check build is shared.
log=$(mktemp)
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --all-features 2>&1 | tee "$log"
# Cargo's own warnings (e.g. two crates writing the same doc path) are not rustdoc's.
if grep -q '^warning' "$log"; then
  echo "FAIL: cargo doc warned"; exit 1
fi

echo "--- testdata/vectors.json matches testdata/make_vectors.py"
python3 testdata/make_vectors.py > testdata/vectors.json
git diff --exit-code -- testdata/vectors.json

echo "lint suite: passed"
