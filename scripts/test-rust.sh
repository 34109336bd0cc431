#!/usr/bin/env bash
# The core (and the store address grammar): unit, integration, property and doc tests (the doc tests of every crate run
# here, once, since cargo-nextest does not run doc tests); the no_std build; the README's
# quickstart; the portable build; the loom models, and proof that they catch a broken CAS
# loop; a real wall-clock step. Clippy (benches included) runs in test-lint.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh

cargo build -p ferroflake --no-default-features
rust_tests 'package(ferroflake) | package(ferroflake-store-address)'

echo "--- doc tests of every crate"
cargo test "${rust_test_selection[@]}" --doc

echo "--- the README's Rust quickstart (core/examples/quickstart.rs; lease/tests/readme.rs keeps them equal)"
rust_build --examples
line=$("$rust_bin_dir/examples/quickstart")
echo "$line"
now_ms=$(date +%s%3N)
# "<decimal id> <base62 id> <timestamp_ms>", the timestamp within a minute of now.
if ! [[ "$line" =~ ^[0-9]+\ [0-9A-Za-z]{11}\ ([0-9]+)$ ]] \
  || (( BASH_REMATCH[1] < now_ms - 60000 || BASH_REMATCH[1] > now_ms + 60000 )); then
  echo "FAIL: the quickstart printed \"$line\", not an id, its base62 form and a current timestamp"
  exit 1
fi

# The test-only variants below take their cfg from FERROFLAKE_CFG through core/build.rs (and
# segment/build.rs), in the cfg-variants profile's own target directory: switching the cfg
# recompiles those crates only, not their dependencies, and not the ordinary builds.
echo "--- the portable build: Linux-only parts compiled out, as on macOS, the BSDs and Windows"
# The fast clock falls back to the system clock; the C, Python and Node faces must still
# compile, so none of them may name a Linux-only item. The check shares test-lint.sh's
# clippy build of the dependencies (same selection, check mode); with every feature, it
# runs core's build script apart from the tests' build (scripts/rust-tests.sh), which
# FERROFLAKE_CFG would otherwise make stale.
FERROFLAKE_CFG=ferroflake_portable cargo test -p ferroflake --test portable --profile cfg-variants
FERROFLAKE_CFG=ferroflake_portable cargo check --workspace --all-features --lib

echo "--- loom models (preemption bound 2)"
FERROFLAKE_CFG=ferroflake_loom LOOM_MAX_PREEMPTIONS=2 \
  cargo test -p ferroflake --features loom --test loom --profile cfg-variants

echo "--- loom models against a mutant (a store in place of the CAS): they must fail"
log=$(mktemp)
if FERROFLAKE_CFG=ferroflake_loom,ferroflake_loom_mutant LOOM_MAX_PREEMPTIONS=2 \
  cargo test -p ferroflake --features loom --test loom --profile cfg-variants >"$log" 2>&1; then
  cat "$log"; echo "FAIL: the loom models passed a generator without its CAS"; exit 1
fi
grep -q "duplicate IDs" "$log" || { cat "$log"; echo "FAIL: mutant failed for another reason"; exit 1; }
echo "mutant caught: $(grep -c '^test .* \.\.\. FAILED$' "$log") of 3 models fail with duplicate or out-of-order IDs"

echo "--- a real wall-clock step under libfaketime: 2 s back for 1 s, then back to real time"
step=$(mktemp -d)
echo "+0" > "$step/offset"
FAKETIME_TIMESTAMP_FILE="$step/offset" FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1 \
  LD_PRELOAD=/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1 \
  "$rust_bin_dir/examples/clock_step" 3 > "$step/report" &
stepper=$!
sleep 1; echo "-2" > "$step/offset"; sleep 1; echo "+0" > "$step/offset"
wait "$stepper" || { cat "$step/report"; echo "FAIL: duplicate or decreasing IDs across a clock step"; exit 1; }
report=$(cat "$step/report"); echo "$report"
field() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" <<<"$report"; }
# Issued before the step, refused with ClockMovedBackwards (about 2,000 ms behind) during it,
# issued again after it, and never anything else.
[ "$(field before)" -gt 0 ] && [ "$(field errors)" -gt 0 ] && [ "$(field after)" -gt 0 ] \
  && [ "$(field max_behind_ms)" -ge 1500 ] && [ "$(field max_behind_ms)" -le 2000 ] \
  && [ "$(field other_errors)" -eq 0 ] \
  || { echo "FAIL: the generator did not refuse and then resume across the clock step"; exit 1; }
echo "clock step: 1 passed, 0 failed"
