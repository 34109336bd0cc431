// A million IDs, unique and safe; numbers only where JavaScript holds them exactly.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addon, assertThrowsCode, FERROFLAKE_EPOCH_MS } from './support.mjs'

const { Layout, Generator, ManualClock } = addon
const parse = (text, format) => Number(addon.parse(text, format))
const MILLION = 1_000_000

function assertUniqueIncreasingSafe(ids) {
  assert.equal(ids.length, MILLION)
  assert.equal(new Set(ids).size, MILLION, 'no duplicates')
  for (let i = 0; i < ids.length; i++) {
    if (!Number.isSafeInteger(ids[i])) assert.fail(`ids[${i}] = ${ids[i]} is not a safe integer`)
    if (i > 0 && !(ids[i] > ids[i - 1])) assert.fail(`ids[${i}] = ${ids[i]} is not above ${ids[i - 1]}`)
  }
}

test('the default layout is js53ms and is JS-safe', () => {
  assert.ok(Layout.default().equals(Layout.preset('js53ms')))
  const generator = new Generator({ nodeId: 0, clock: new ManualClock(Date.now()) })
  assert.ok(generator.layout.equals(Layout.preset('js53ms')))
  assert.equal(generator.isJsSafe, true)
  assert.equal(generator.layout.maxId, 2n ** 53n - 1n)
})

test('1,000,000 nextId() numbers on a manual clock: unique, increasing, safe', () => {
  // js53ms issues 256 IDs per ms; the manual clock jumps to the next ms when they run out.
  const clock = new ManualClock(FERROFLAKE_EPOCH_MS + 1)
  const generator = new Generator({ nodeId: 13, clock })
  const ids = new Array(MILLION)
  for (let i = 0; i < MILLION; i++) ids[i] = generator.nextId()
  assertUniqueIncreasingSafe(ids)
  assert.equal(generator.counters().waits, Math.ceil(MILLION / 256) - 1, 'one wait per used-up ms')
  assert.equal(generator.decode(ids.at(-1)).nodeId, 13)
})

test('1,000,000 IDs on the system clock (js53ms, in batches): unique, increasing, safe', () => {
  // About 4 s: js53ms allows 256,000 IDs per second per node.
  const generator = new Generator({ nodeId: 14 })
  const ids = []
  while (ids.length < MILLION) ids.push(...generator.nextIds(Math.min(4096, MILLION - ids.length)))
  const finishedMs = Date.now()
  assertUniqueIncreasingSafe(ids)
  const { timestampMs } = generator.decode(ids.at(-1))
  assert.ok(Math.abs(timestampMs - finishedMs) <= 1_000, `IDs carry the real time (${timestampMs} vs ${finishedMs})`)
})

test('a 53-bit layout at its last tick hands out 2^53 - 1 but never 2^53', () => {
  const layout = Layout.preset('js53ms')
  const clock = new ManualClock(layout.exhaustsAtMs - 1)
  const generator = new Generator({ nodeId: 15, clock })
  const ids = generator.nextIds(256) // the whole last tick of node 15: sequences 0..255
  assert.equal(ids.at(-1), Number.MAX_SAFE_INTEGER)
  assertThrowsCode(() => generator.nextId(), RangeError, 'ERR_FERROFLAKE_LAYOUT_EXHAUSTED')
})

test('63-bit layouts refuse numbers up front and give exact bigints and strings', () => {
  const clock = new ManualClock(Date.now())
  const generator = new Generator({ nodeId: 1023, layout: 'twitter', clock })
  assert.equal(generator.isJsSafe, false)
  assertThrowsCode(() => generator.nextId(), RangeError, 'ERR_FERROFLAKE_UNSAFE_INTEGER')
  const detached = generator.nextId
  assertThrowsCode(() => detached(), RangeError, 'ERR_FERROFLAKE_UNSAFE_INTEGER')
  assertThrowsCode(() => Generator.prototype.nextId.call(generator), RangeError, 'ERR_FERROFLAKE_UNSAFE_INTEGER')
  const a = generator.nextIdBigInt()
  const b = BigInt(generator.nextIdString())
  const c = addon.parse(generator.nextIdString('base62'), 'base62')
  const batch = generator.nextIdsBigInt(3)
  assert.equal(typeof a, 'bigint')
  assert.ok(a > 2n ** 53n, 'a twitter ID today is past 2^53')
  assert.ok(a < b && b < c && c < batch[0] && batch[0] < batch[1] && batch[1] < batch[2])
  assert.equal(generator.decode(a).nodeId, 1023)
  assert.equal(generator.decode(a.toString()).sequence, 0)
})

test('nextId, the bound fast paths and the prototype methods share one sequence', () => {
  const generator = new Generator({ nodeId: 3, clock: new ManualClock(Date.now()) })
  const next = generator.nextId // detached: the bound function needs no `this`
  const ids = [generator.nextId(), next(), Generator.prototype.nextId.call(generator),
    Number(generator.nextIdBigInt()), Number(Generator.prototype.nextIdBigInt.call(generator)),
    Number(generator.nextIdString()), Number(Generator.prototype.nextIdString.call(generator)),
    parse(generator.nextIdString('base62'), 'base62'), ...generator.nextIds(2), ...Array.from(generator.nextIdsBigInt(2), Number)]
  for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1] + 1, `consecutive at ${i}`)
  assert.ok(!Object.keys(generator).includes('nextId'), 'bound methods are not enumerable')
})

test('decode gives timestampMs, date, nodeId, sequence and shard', () => {
  const clock = new ManualClock(1_700_000_000_123)
  const generator = new Generator({ nodeId: 9, layout: 'sharded', clock })
  const id = generator.nextIdForShard(13)
  const parts = generator.decode(id)
  assert.deepEqual(Object.keys(parts).sort(), ['date', 'nodeId', 'sequence', 'shard', 'timestampMs'])
  assert.equal(parts.timestampMs, 1_700_000_000_123)
  assert.ok(parts.date instanceof Date)
  assert.equal(parts.date.toISOString(), '2023-11-14T22:13:20.123Z')
  assert.equal(parts.nodeId, 9)
  assert.equal(parts.shard, 13)
  assert.deepEqual(addon.decode(id, 'sharded'), parts)
  assert.deepEqual(addon.decode(id.toString(), Layout.preset('sharded')), parts)
})
