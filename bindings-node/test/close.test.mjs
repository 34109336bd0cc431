// close() and Symbol.dispose give a Generator's node id back at once, without waiting for
// the garbage collector; and no bound function ever ends a failed call with `undefined`.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addon, assertThrowsCode } from './support.mjs'

const { Generator, ManualClock, errorCodes } = addon

test('close() frees the node id at once: another layout, clock or options may take it', () => {
  const first = new Generator({ nodeId: 7, layout: 'js53' })
  const last = first.nextId()
  // While open, another configuration is refused...
  assertThrowsCode(() => new Generator({ nodeId: 7, layout: 'js53', maxDriftTicks: 1 }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  first.close()
  assert.equal(first.isClosed, true)
  // ...and once closed it is not, with no garbage collection in between (first is still
  // referenced here).
  const second = new Generator({ nodeId: 7, layout: 'js53', maxDriftTicks: 1 })
  assert.equal(second.isShared, false)
  assert.ok(second.nextId() > last, 'the node id continues after the IDs the closed one issued')
  second.close()
})

test('Symbol.dispose closes a Generator', () => {
  assert.equal(typeof Symbol.dispose, 'symbol')
  const generator = new Generator({ nodeId: 8 })
  assert.equal(generator[Symbol.dispose], generator.close)
  assert.ok(!Object.keys(generator).includes(String(Symbol.dispose)), 'not enumerable')
  generator.nextId()
  generator[Symbol.dispose]()
  assert.equal(generator.isClosed, true)
  const other = new Generator({ nodeId: 8, clock: new ManualClock(Date.now() + 60_000) })
  other.close()
})

test('`using` closes a Generator at the end of its block (where the syntax exists)', (t) => {
  let body
  try {
    body = new Function('Generator', '{ using generator = new Generator({ nodeId: 9 }); generator.nextId(); return generator }')
  } catch {
    t.skip(`this Node (${process.version}) has Symbol.dispose but not the \`using\` syntax`)
    return
  }
  assert.equal(body(Generator).isClosed, true)
})

test('a node id shared by two Generators stays taken until both are closed', () => {
  const a = new Generator({ nodeId: 10 })
  const b = new Generator({ nodeId: 10 })
  assert.equal(b.isShared, true)
  a.close()
  assertThrowsCode(() => new Generator({ nodeId: 10, layout: 'js53' }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  assert.ok(Number.isSafeInteger(b.nextId()), 'the other one still issues')
  b.close()
  new Generator({ nodeId: 10, layout: 'js53' }).close()
})

test('a closed Generator refuses every issuing call with ERR_FERROFLAKE_CLOSED; closing twice does nothing', () => {
  const generator = new Generator({ nodeId: 11 })
  const sharded = new Generator({ nodeId: 15, layout: 'sharded' })
  const detached = { nextId: generator.nextId, nextIdBigInt: generator.nextIdBigInt, nextIdString: generator.nextIdString }
  generator.close()
  generator.close()
  sharded.close()
  const calls = {
    nextId: () => generator.nextId(),
    'detached nextId': () => detached.nextId(),
    'detached nextIdBigInt': () => detached.nextIdBigInt(),
    'detached nextIdString': () => detached.nextIdString('base62'),
    'prototype nextId': () => Generator.prototype.nextId.call(generator),
    'prototype nextIdBigInt': () => Generator.prototype.nextIdBigInt.call(generator),
    'prototype nextIdString': () => Generator.prototype.nextIdString.call(generator),
    nextIds: () => generator.nextIds(2),
    nextIdsBigInt: () => generator.nextIdsBigInt(2),
    nextIdForShard: () => sharded.nextIdForShard(1),
    setFenceMs: () => generator.setFenceMs(1),
    clearFence: () => generator.clearFence(),
  }
  for (const [what, call] of Object.entries(calls)) {
    assert.throws(call, (e) => {
      assert.equal(e.code, 'ERR_FERROFLAKE_CLOSED', `${what}: ${e.code} ${e.message}`)
      assert.equal(e.constructor, Error, what)
      return true
    }, what)
  }
  // What it was stays readable.
  assert.equal(generator.nodeId, 11)
  assert.equal(sharded.layout.shardBits, 4)
})

test('every failed call of a bound function throws an error with a listed code, never returns undefined', () => {
  const codes = new Set(errorCodes().map((row) => row.code))
  const clock = new ManualClock(Date.now())
  const wide = new Generator({ nodeId: 12, layout: 'twitter', clock })
  const safe = new Generator({ nodeId: 12, layout: 'twitter', clock })
  const closed = new Generator({ nodeId: 13 })
  closed.close()
  const fenced = new Generator({ nodeId: 14, clock: new ManualClock(Date.now()) })
  fenced.setFenceMs(1)
  const failing = [
    ['a number from a 63-bit layout', wide.nextId],
    ['a bad format', safe.nextIdString, 'hex'],
    ['a format of the wrong type', safe.nextIdString, 62],
    ['a closed generator', closed.nextId],
    ['a closed generator, bigint', closed.nextIdBigInt],
    ['a closed generator, string', closed.nextIdString],
    ['past the fence', fenced.nextId],
    ['past the fence, bigint', fenced.nextIdBigInt],
    ['past the fence, string', fenced.nextIdString, 'base32'],
  ]
  for (const [what, fn, argument] of failing) {
    let returned
    let thrown
    try {
      returned = argument === undefined ? fn() : fn(argument)
    } catch (error) {
      thrown = error
    }
    assert.ok(thrown, `${what}: returned ${String(returned)} instead of throwing`)
    assert.ok(codes.has(thrown.code), `${what}: ${thrown.code} is a listed code (${thrown.message})`)
  }
  wide.close()
  safe.close()
})
