#!/usr/bin/env bash
# The core: unit, integration, property and doc tests; the no_std build; clippy; the loom
# models, and proof that they catch a broken CAS loop. Benches are compile-checked, not run.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -p ferroflake --no-default-features
cargo clippy -p ferroflake --all-targets -- -D warnings
cargo test -p ferroflake

echo "--- loom models (release, preemption bound 2)"
RUSTFLAGS="--cfg ferroflake_loom" LOOM_MAX_PREEMPTIONS=2 \
  cargo test -p ferroflake --test loom --release --target-dir target/loom

echo "--- loom models against a mutant (a store in place of the CAS): they must fail"
log=$(mktemp)
if RUSTFLAGS="--cfg ferroflake_loom --cfg ferroflake_loom_mutant" LOOM_MAX_PREEMPTIONS=2 \
  cargo test -p ferroflake --test loom --release --target-dir target/loom-mutant >"$log" 2>&1; then
  cat "$log"; echo "FAIL: the loom models passed a generator without its CAS"; exit 1
fi
grep -q "duplicate IDs" "$log" || { cat "$log"; echo "FAIL: mutant failed for another reason"; exit 1; }
echo "mutant caught: $(grep -c '^test .* FAILED' "$log") of 3 models report duplicate or out-of-order IDs"

echo "--- benches compile"
cargo check -p ferroflake-benches --benches
