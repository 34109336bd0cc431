#!/usr/bin/env bash
# The Node addon (bindings-node). First the user's path: `npm install ./bindings-node` from
# another folder, which builds the addon from source through the package's install script,
# then `require` and `import` from there. Then the tests, with node's built-in runner:
# vectors.json, the error table, a million IDs, worker_threads, child processes, ESM, and
# the committed index.d.ts/index.js against a fresh napi build. Benchmarks are not run here.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
package="$root/bindings-node"
consumer="$(mktemp -d)"
trap 'rm -rf "$consumer"' EXIT

echo "--- npm install $package from $consumer (builds from source)"
cd "$consumer"
npm init -y >/dev/null
npm install --no-audit --no-fund "$package"
node -e '
  const { Generator } = require("ferroflake");
  const id = new Generator({ nodeId: 1 }).nextId();
  if (!Number.isSafeInteger(id)) throw new Error("require: bad id " + id);
  console.log("require(\"ferroflake\") from the consumer folder:", id);
'
node --input-type=module -e '
  import { Generator, decode } from "ferroflake";
  const id = new Generator({ nodeId: 2 }).nextId();
  if (decode(id).nodeId !== 2) throw new Error("import: bad id " + id);
  console.log("import from the consumer folder:", id);
'

echo "--- dev dependencies (the napi CLI, for the .d.ts check)"
cd "$package"
npm install --no-audit --no-fund --ignore-scripts

echo "--- node --test"
node --test --expose-gc test/*.test.mjs
