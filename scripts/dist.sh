#!/usr/bin/env bash
# Sourced by the suites that test what ships (test-c.sh, test-python.sh, test-node.sh,
# test-release.sh): where scripts/release.sh puts the artifacts, and a check that they were
# built from the sources as they are now, so that no suite tests a stale artifact.

dist_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="$dist_root/dist"
dist_stamp="$dist/.sources"

# The sources the artifacts are built from, as one hash: every file git tracks or would
# track, as it is in the working tree, but for the ones no artifact holds or is built by
# (the suites' scripts and tests, benches, the lease model, the front page and the guides in
# docs/, this project's own settings), so a test can be changed and run again without a new
# release build; and the Rust toolchain that builds them.
dist_sources_hash() {
  local index
  index="$(mktemp)"
  cp "$(git -C "$dist_root" rev-parse --path-format=absolute --git-path index)" "$index"
  GIT_INDEX_FILE="$index" git -C "$dist_root" add -A
  {
    GIT_INDEX_FILE="$index" git -C "$dist_root" ls-files -s |
      grep -Ev $'\t(scripts/test-|scripts/servers/|scripts/rust-tests\\.sh|benches/|bindings-python/tests/|bindings-(python|node)/bench/|bindings-node/test/|ffi-c/tests/|lease/model/|docs/|\\.ci/|\\.config/|\\.gitignore$|README\\.md$|BENCHMARKS\\.md$)'
    rustc -vV
  } | sha256sum | cut -d' ' -f1
  rm -f "$index"
}

# dist_stamp HASH: records that dist/ holds what the sources that hashed to HASH build
# (scripts/release.sh, last, with the hash it took before building).
dist_stamp() {
  echo "$1" >"$dist_stamp"
}

# Stops the calling suite unless dist/ was built from the sources as they are now.
need_dist() {
  if [ ! -f "$dist_stamp" ]; then
    echo "no release artifacts in $dist: run scripts/release.sh --allow-dirty first" >&2
    exit 1
  fi
  if [ "$(cat "$dist_stamp")" != "$(dist_sources_hash)" ]; then
    echo "$dist was built from other sources: run scripts/release.sh --allow-dirty again" >&2
    exit 1
  fi
}
