#!/usr/bin/env bash
# Installs what the tests need and runs every suite, in order. `.ci/run` calls this and
# nothing else. Each suite script can also be run on its own after install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/install-deps.sh
for suite in lint rust c python node lease lease-model lease-stores segment segment-stores serve release; do
  echo "=== suite: $suite ($(( $(date +%s) - start )) s elapsed)"
  bash "scripts/test-$suite.sh"
done
echo "=== all suites passed in $(( $(date +%s) - start )) s"
