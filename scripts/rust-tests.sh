#!/usr/bin/env bash
# Sourced by the suites: the one build of every Rust test. Each suite runs its part of it
# with a cargo-nextest filterset, so cargo compiles the workspace and its dependencies once,
# in one profile (dev) with one feature set. A suite that asked for `-p CRATE --features X`
# instead would make resolver 2 choose other features for the dependencies they share,
# and compile them again. Not in it: the Python and Node crates, extension modules that
# maturin and napi build (scripts/release.sh) and clippy checks (scripts/test-lint.sh), and
# the lease protocol's model, which only an optimised build checks in reasonable time
# (scripts/test-lease-model.sh). Test groups are in .config/nextest.toml.

# The test-only cfgs (core/build.rs) are set per command, never inherited.
unset FERROFLAKE_CFG

rust_tests_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rust_test_excluded=(ferroflake-python ferroflake-node ferroflake-lease-model)

# Every feature of the selected crates but `loom`, which only compiles loom in for the
# cfg-variants builds. Left out, it also keeps this build's run of core's build script
# apart from the --all-features check builds (clippy, the portable check), which would
# otherwise share it and, by changing FERROFLAKE_CFG, make this build stale.
rust_test_features="$(cd "$rust_tests_root" && cargo metadata --format-version 1 --no-deps |
  python3 -c '
import json, sys
excluded = set(sys.argv[1:])
meta = json.load(sys.stdin)
members = set(meta["workspace_members"])
print(",".join(sorted(
    package["name"] + "/" + feature
    for package in meta["packages"]
    if package["id"] in members and package["name"] not in excluded
    for feature in package["features"]
    if feature != "loom"
)))' "${rust_test_excluded[@]}")"

rust_test_selection=(--workspace --features "$rust_test_features")
for crate in "${rust_test_excluded[@]}"; do rust_test_selection+=(--exclude "$crate"); done

# rust_tests FILTERSET [NEXTEST OPTIONS...]: runs the tests FILTERSET selects, building
# whatever changed first.
rust_tests() {
  local filter="$1"
  shift
  cargo nextest run "${rust_test_selection[@]}" --no-fail-fast -E "$filter" "$@"
}

# rust_tests_by_file FILTERSET [NEXTEST OPTIONS...]: the same, one test binary (a test file,
# a crate's unit tests) at a time, as `cargo test` runs them: for files whose deadlines
# were set with no other file's processes sharing the two cores.
rust_tests_by_file() {
  local filter="$1" binary binaries
  shift
  # What decides which tests match: the filterset and --run-ignored.
  local list_options=() options=("$@")
  while [ $# -gt 0 ]; do
    [ "$1" = --run-ignored ] && list_options+=("$1" "$2")
    shift
  done
  binaries="$(cargo nextest list "${rust_test_selection[@]}" -E "$filter" "${list_options[@]}" \
    --message-format json |
    python3 -c '
import json, sys
suites = json.load(sys.stdin)["rust-suites"]
for binary_id, suite in sorted(suites.items()):
    if any(case["filter-match"]["status"] == "matches" for case in suite["testcases"].values()):
        print(binary_id)')"
  [ -n "$binaries" ] || { echo "no test matches $filter" >&2; return 1; }
  for binary in $binaries; do
    rust_tests "($filter) & binary_id($binary)" "${options[@]}"
  done
}

# rust_tests_build: builds every test of the selection and runs none.
rust_tests_build() {
  cargo nextest run "${rust_test_selection[@]}" --no-run
}

# rust_build [CARGO BUILD OPTIONS...]: builds targets of the same build (the CLI, the
# examples, the C library's archive) for the suites that run them as a user would. Always
# with --tests: cargo takes the dev-dependencies' features into account only for a build
# with test targets, and without them would compile the shared dependencies again.
rust_build() {
  cargo build -q "${rust_test_selection[@]}" --tests "$@"
}

# The binaries and examples of that build.
rust_target_dir="${CARGO_TARGET_DIR:-$rust_tests_root/target}"
rust_bin_dir="$rust_target_dir/debug"
