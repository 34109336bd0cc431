#!/usr/bin/env bash
# The Node addon (bindings-node), as it ships: the two npm tarballs scripts/release.sh
# built into dist/npm/ (the loader and types, and the prebuilt x86-64 Linux addon),
# installed with `npm install` into a new project outside the checkout, then `require` and
# `import` from there, and the Node snippets of README.md (the quickstart) and
# docs/public-ids.md (the mask example, under a test key). Then the tests, with node's
# built-in runner, on that installed copy: vectors.json, the error table, a million IDs,
# worker_threads, child processes, ESM and the
# shipped index.d.ts, close()/Symbol.dispose, leased generators (processes, cluster workers,
# worker_threads and a SIGSTOPped holder on an embedded registry in a temp folder),
# segments (processes on one SQLite file) and order numbers, MaskKeyring (vectors.json's
# mask cases, key files, the environment), Redis when FERROFLAKE_TEST_REDIS is set (skipped,
# saying so, otherwise); and, in the checkout, the committed index.d.ts/index.js against
# what napi wrote in the release build. The build from the package's own sources is tested in test-release.sh.
# Benchmarks are not run here.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
package="$root/bindings-node"
source "$root/scripts/dist.sh"
need_dist
version="$(node -p 'require(process.argv[1]).version' "$package/package.json")"
npm_main="$dist/npm/ferroflake-$version.tgz"
npm_prebuilt="$dist/npm/ferroflake-linux-x64-gnu-$version.tgz"
consumer="$(mktemp -d)"
# A service for the tests that take segments through one (FERROFLAKE_TEST_SERVICE).
source "$root/scripts/servers/service.sh"
trap 'rm -rf "$consumer"; stop_test_service' EXIT
start_test_service

echo "--- npm install the tarballs of dist/npm/ from $consumer"
cd "$consumer"
npm init -y >/dev/null
npm install --no-audit --no-fund "$npm_prebuilt" "$npm_main"
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

# snippet DOC SECTION NAME: the js block of SECTION in DOC (a path under the checkout) as
# NAME.js, and as NAME.mjs with the `import` the first line's comment offers in place of
# `require`.
snippet() {
  sed -n "/<!-- section:$2 -->/,/<!-- \/section:$2 -->/p" "$root/$1" |
    sed -n '/^```js$/,/^```$/p' | sed '1d;$d' >"$3.js"
  [ -s "$3.js" ] || { echo "FAIL: $1 has no js block in a $2 section"; exit 1; }
  sed -E '1s#^const .* // or: (import .*)$#\1#' "$3.js" >"$3.mjs"
  grep -q '^import ' "$3.mjs" || { echo "FAIL: $1's $2 offers no import form"; exit 1; }
}

echo "--- README.md's Node quickstart, as require and as import, from the consumer folder"
snippet README.md quickstart-node quickstart
# Loaded first by each snippet's check (--require): records what the snippet logs.
cat >record-log.cjs <<'JS'
const logged = []
const log = console.log
console.log = (...args) => { logged.push(args); log(...args) }
module.exports = logged
JS
# Checks what the quickstart logged when the process ends.
cat >check-quickstart.cjs <<'JS'
const assert = require('node:assert/strict')
const logged = require('./record-log.cjs')
process.on('exit', (code) => {
  if (code !== 0) return
  assert.equal(logged.length, 1, 'the quickstart logs one line')
  const [id, parts] = logged[0]
  assert.ok(Number.isSafeInteger(id) && id > 0, `id ${id} is a positive safe integer`)
  assert.equal(parts.nodeId, 3)
  assert.ok(Number.isSafeInteger(parts.sequence) && parts.shard === 0)
  assert.ok(Math.abs(parts.timestampMs - Date.now()) < 60_000, 'the timestamp is now')
  assert.ok(parts.date instanceof Date && parts.date.getTime() === parts.timestampMs)
})
JS
node --require ./check-quickstart.cjs quickstart.js
node --require ./check-quickstart.cjs quickstart.mjs

echo "--- docs/public-ids.md's Node mask example, as require and as import, with a test key"
snippet docs/public-ids.md quickstart-node-mask mask
cat >check-mask.cjs <<'JS'
const assert = require('node:assert/strict')
const logged = require('./record-log.cjs')
process.on('exit', (code) => {
  if (code !== 0) return
  assert.equal(logged.length, 1, 'the mask example logs one line')
  const [text, id] = logged[0]
  assert.equal(id, 42)
  // The example's "e.g." is this key's text for 42.
  assert.equal(text, '164beLlL5g')
})
JS
FERROFLAKE_MASK_KEY=1:000102030405060708090a0b0c0d0e0f node --require ./check-mask.cjs mask.js
FERROFLAKE_MASK_KEY=1:000102030405060708090a0b0c0d0e0f node --require ./check-mask.cjs mask.mjs

echo "--- the committed index.d.ts and index.js against napi's output in the release build"
# scripts/release.sh built the shipped addon with napi's CLI, which wrote them beside it.
cd "$package"
FERROFLAKE_NAPI_OUTPUT="${CARGO_TARGET_DIR:-$root/target}/release-stage/npm/napi" \
  node --test test/dts.test.mjs

echo "--- node --test, on the installed package"
# The tests go into the installed package's folder, where `ferroflake` and ../index.d.ts
# are the installed ones.
installed="$consumer/node_modules/ferroflake"
cp -r "$package/test" "$installed/test"
cd "$installed"
tests=()
for file in test/*.test.mjs; do
  [ "$file" = test/dts.test.mjs ] || tests+=("$file")
done
# Three files at a time (node runs one at a time on two cores): most wait out leases.
FERROFLAKE_TEST_VECTORS="$root/testdata/vectors.json" node --test --test-concurrency=3 --expose-gc "${tests[@]}"
