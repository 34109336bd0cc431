#!/usr/bin/env bash
# Segment mode: the store conformance suite (in-memory, SQLite), the allocator's tests,
# docs/segments.md's quickstart and CLI lines (doc tests run in test-rust.sh, clippy in
# test-lint.sh); the loom model of the hot path
# and the segment switch, and proof that it catches a broken increment and a broken switch.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/rust-tests.sh

# One test file at a time, as their deadlines (100 ms bounds on the allocator) assume.
rust_tests_by_file 'package(ferroflake-segment)'

echo "--- docs/segments.md's quickstart (examples/quickstart.rs) and its CLI lines"
rust_build --bins --examples
ferroflake="$rust_bin_dir/ferroflake"
# The key is created once, as the quickstart says; a run before this one made it already.
"$ferroflake" segment create orders --start 1 --step 1000 2>/dev/null ||
  "$ferroflake" segment status orders >/dev/null
"$rust_bin_dir/examples/segment_quickstart" | grep -qE '^[0-9]+, runway [0-9]+ IDs$'

store="$(mktemp -d)/segments.db"
"$ferroflake" segment create orders --start 1 --step 1000 --store "$store"
[ "$("$ferroflake" segment next orders -n 3 --store "$store" | tr '\n' ' ')" = "1 2 3 " ]
[ "$("$ferroflake" segment next orders -n 3 --store "$store" | tr '\n' ' ')" = "4 5 6 " ]
"$ferroflake" segment status orders --store "$store" | grep -qE 'orders +7 +1000'
rm -rf "$(dirname "$store")"
echo "segment README smoke: 5 passed"

# The loom builds take their cfg from FERROFLAKE_CFG through segment/build.rs (and
# core/build.rs), in the cfg-variants profile's target directory, which test-rust.sh's
# models share: a mutant recompiles these two crates, not loom and its dependencies.
echo "--- loom model of the segment switch (preemption bound 3)"
FERROFLAKE_CFG=ferroflake_loom LOOM_MAX_PREEMPTIONS=3 \
  cargo test -p ferroflake-segment --no-default-features --features loom --test loom \
  --profile cfg-variants

# Each mutant must fail the models with duplicate IDs: an increment split into a read and
# a write, and a switch that publishes the new bounds before it resets the cursor.
for mutant in "ferroflake_loom_mutant:a read and a write in place of the fetch_add" \
              "ferroflake_loom_mutant_switch:a switch that publishes the bounds before it resets the cursor"; do
  cfg=${mutant%%:*}
  echo "--- loom model against a mutant (${mutant#*:}): it must fail"
  log=$(mktemp)
  if FERROFLAKE_CFG="ferroflake_loom,$cfg" LOOM_MAX_PREEMPTIONS=2 \
    cargo test -p ferroflake-segment --no-default-features --features loom --test loom \
    --profile cfg-variants >"$log" 2>&1; then
    cat "$log"; echo "FAIL: the loom model passed $cfg"; exit 1
  fi
  grep -q "duplicate IDs" "$log" || { cat "$log"; echo "FAIL: $cfg failed for another reason"; exit 1; }
  echo "mutant caught: $(grep -c '^test .* \.\.\. FAILED$' "$log") models fail, with duplicate IDs"
  rm -f "$log"
done
