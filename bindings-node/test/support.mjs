// Shared by the test files: the addon (through the package's own name, so the exports map
// is what the tests use) and testdata/vectors.json (FERROFLAKE_TEST_VECTORS names it where
// the tests run from an installed copy of the package, as scripts/test-node.sh runs them).
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import assert from 'node:assert/strict'

const require = createRequire(import.meta.url)
export const addon = require('ferroflake')

export const vectors = JSON.parse(
  readFileSync(
    process.env.FERROFLAKE_TEST_VECTORS ??
      fileURLToPath(new URL('../../testdata/vectors.json', import.meta.url)),
    'utf8',
  ),
)

/** A vectors.json layout spec (snake_case) in the addon's camelCase shape. */
/** Every text format `encode` takes, as index.d.ts lists them. */
export const FORMATS = [
  'dec', 'base62', 'base32', 'base58-flickr', 'base32-bwmarrin', 'base36', 'base2',
  'base64-decimal', 'json',
]

export function camelSpec(spec) {
  return {
    timeBits: spec.time_bits,
    nodeBits: spec.node_bits,
    sequenceBits: spec.sequence_bits,
    shardBits: spec.shard_bits,
    tickMs: spec.tick_ms,
    epochMs: spec.epoch_ms,
    order: spec.order,
  }
}

/** A vectors.json layout spec as a custom `Layout`. */
export function layoutFrom(spec) {
  return addon.Layout.custom(camelSpec(spec))
}

/** Asserts that `fn` throws `errorClass` with `code`; returns the error. */
export function assertThrowsCode(fn, errorClass, code) {
  let caught
  assert.throws(fn, (error) => {
    caught = error
    return true
  })
  assert.equal(caught.constructor, errorClass, `${caught.constructor.name} (${caught.code}): ${caught.message}`)
  assert.equal(caught.code, code, caught.message)
  return caught
}

export const FERROFLAKE_EPOCH_MS = 1_577_836_800_000
