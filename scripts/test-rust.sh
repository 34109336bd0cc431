#!/usr/bin/env bash
# The core and the Rust crates: unit, integration and doc tests, the no_std build, the loom
# models, clippy. No benchmark runs here; benches are only compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p ferroflake --no-default-features
cargo test -p ferroflake -p ferroflake-cli
RUSTFLAGS="--cfg ferroflake_loom" LOOM_MAX_PREEMPTIONS=2 \
  cargo test -p ferroflake --test loom --release --target-dir target/loom
