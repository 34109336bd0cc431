#!/usr/bin/env bash
# Prints cargo's target directory for this workspace as an absolute path: $CARGO_TARGET_DIR
# if set, else what `cargo metadata` says. Absolute, because cargo runs each bench in its
# package's directory, where criterion would read a relative CARGO_TARGET_DIR as another
# folder than the one the bench scripts summarise.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-$(cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}
realpath -m "$target"
