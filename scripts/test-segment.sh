#!/usr/bin/env bash
# Segment mode: the store conformance suite (in-memory, SQLite), the allocator's tests,
# doc tests, clippy, the README's quickstart and CLI lines; the loom model of the hot path
# and the segment switch, and proof that it catches a broken increment and a broken switch.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"

cargo clippy -p ferroflake-segment --all-targets --features conformance -- -D warnings
cargo test -p ferroflake-segment --features conformance

echo "--- the README's segment quickstart (examples/quickstart.rs) and its CLI lines"
cargo run -q -p ferroflake-segment --example quickstart | grep -qE '^[0-9]+, runway [0-9]+ IDs$'
cargo build -q -p ferroflake-cli
ferroflake="${CARGO_TARGET_DIR:-target}/debug/ferroflake"
store="$(mktemp -d)/segments.db"
"$ferroflake" segment create orders --start 1 --step 1000 --store "$store"
[ "$("$ferroflake" segment next orders -n 3 --store "$store" | tr '\n' ' ')" = "1 2 3 " ]
[ "$("$ferroflake" segment next orders -n 3 --store "$store" | tr '\n' ' ')" = "4 5 6 " ]
"$ferroflake" segment status orders --store "$store" | grep -qE 'orders +7 +1000'
rm -rf "$(dirname "$store")"
echo "segment README smoke: 5 passed"

echo "--- loom model of the segment switch (release, preemption bound 3)"
RUSTFLAGS="--cfg ferroflake_loom" LOOM_MAX_PREEMPTIONS=3 \
  cargo test -p ferroflake-segment --no-default-features --test loom --release \
  --target-dir target/loom

# Each mutant must fail the models with duplicate IDs: an increment split into a read and
# a write, and a switch that publishes the new bounds before it resets the cursor.
for mutant in "ferroflake_loom_mutant:a read and a write in place of the fetch_add" \
              "ferroflake_loom_mutant_switch:a switch that publishes the bounds before it resets the cursor"; do
  cfg=${mutant%%:*}
  echo "--- loom model against a mutant (${mutant#*:}): it must fail"
  log=$(mktemp)
  if RUSTFLAGS="--cfg ferroflake_loom --cfg $cfg" LOOM_MAX_PREEMPTIONS=2 \
    cargo test -p ferroflake-segment --no-default-features --test loom --release \
    --target-dir "target/loom-$cfg" >"$log" 2>&1; then
    cat "$log"; echo "FAIL: the loom model passed $cfg"; exit 1
  fi
  grep -q "duplicate IDs" "$log" || { cat "$log"; echo "FAIL: $cfg failed for another reason"; exit 1; }
  echo "mutant caught: $(grep -c '^test .* \.\.\. FAILED$' "$log") models fail, with duplicate IDs"
  rm -f "$log"
done
