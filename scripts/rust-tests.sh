#!/usr/bin/env bash
# Sourced by the suites: the one build of every Rust test. Each suite runs its part of it
# with a cargo-nextest filterset, so cargo compiles the workspace and its dependencies once,
# in one profile (dev) with one feature set. A suite that asked for `-p CRATE --features X`
# instead would make resolver 2 choose other features for the dependencies they share,
# and compile them again. Not in it: the Python and Node crates, extension modules that
# maturin and napi build (scripts/release.sh) and clippy checks (scripts/test-lint.sh), and
# the lease protocol's model, which only an optimised build checks in reasonable time
# (scripts/test-lease-model.sh).
# Test groups (which tests run alone, which one at a time) are in .config/nextest.toml.

rust_test_selection=(--workspace --exclude ferroflake-python --exclude ferroflake-node
  --exclude ferroflake-lease-model --all-features)

# rust_tests FILTERSET [NEXTEST OPTIONS...]: runs the tests FILTERSET selects, building
# whatever changed first.
rust_tests() {
  local filter="$1"
  shift
  cargo nextest run "${rust_test_selection[@]}" --no-fail-fast -E "$filter" "$@"
}

# rust_tests_build: builds every test of the selection and runs none.
rust_tests_build() {
  cargo nextest run "${rust_test_selection[@]}" --no-run
}

# rust_build [CARGO BUILD OPTIONS...]: builds targets of the same build (the CLI, the
# examples), for the suites that run them as a user would; prints nothing on success.
rust_build() {
  cargo build -q "${rust_test_selection[@]}" "$@"
}

# The binaries and examples of that build.
rust_target_dir="${CARGO_TARGET_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target}"
rust_bin_dir="$rust_target_dir/debug"
