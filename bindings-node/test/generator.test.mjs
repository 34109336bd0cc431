// Generator options and behaviour: clocks, drift, fences, resume, counters, and the
// in-process registry that makes two Generators for one node share a core generator.
// A node id holds one core generator per process, so each test uses node ids of its own.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addon, assertThrowsCode, FERROFLAKE_EPOCH_MS } from './support.mjs'

const { Layout, Generator, ManualClock } = addon

test('a clock that goes back within the wait is ridden out; beyond it is an Error', () => {
  const clock = new ManualClock(1_700_000_000_000)
  const generator = new Generator({ nodeId: 1, clock, maxDriftTicks: 10 })
  const first = generator.nextId()
  clock.rewindMs(5)
  assert.ok(generator.nextId() > first, 'within the drift: continues from the last tick')
  assert.equal(generator.counters().rollbacks, 0)
  clock.rewindMs(1000)
  const error = assertThrowsCode(() => generator.nextId(), Error, 'ERR_FERROFLAKE_CLOCK_MOVED_BACKWARDS')
  assert.ok(!(error instanceof RangeError))
  assert.match(error.message, /1005 ms behind/)
})

test('a short step back beyond the drift is waited out (maxBackwardWaitMs) and counted', () => {
  const clock = new ManualClock(1_700_000_000_000)
  const generator = new Generator({ nodeId: 10, clock, maxBackwardWaitMs: 5 })
  const first = generator.nextId()
  clock.rewindMs(3)
  assert.ok(generator.nextId() > first)
  assert.equal(generator.counters().rollbacks, 1)
  assert.equal(clock.nowMs, 1_700_000_000_000, 'waiting on a manual clock moves it to the target')
})

test('maxDriftTicks lets a burst borrow future ticks, counted', () => {
  const clock = new ManualClock(1_700_000_000_000)
  const generator = new Generator({ nodeId: 2, clock, maxDriftTicks: 3 })
  const ids = generator.nextIds(256 * 4)
  assert.equal(new Set(ids).size, ids.length)
  assert.equal(clock.nowMs, 1_700_000_000_000, 'the clock did not have to move')
  assert.equal(generator.counters().borrowedTicks, 3)
})

test('a fence stops issuing (LEASE_EXPIRED) until cleared', () => {
  const clock = new ManualClock(1_700_000_000_000)
  const generator = new Generator({ nodeId: 3, clock })
  assert.equal(generator.fenceMs, null)
  generator.setFenceMs(1_700_000_000_010)
  assert.equal(generator.fenceMs, 1_700_000_000_010)
  generator.nextId()
  clock.advanceMs(10)
  const error = assertThrowsCode(() => generator.nextId(), Error, 'ERR_FERROFLAKE_LEASE_EXPIRED')
  assert.match(error.message, /1700000000010/)
  generator.clearFence()
  assert.equal(typeof generator.nextId(), 'number')
})

test('resumeAfterMs skips the tick a previous holder may have used', () => {
  const clock = new ManualClock(1_700_000_000_000)
  const generator = new Generator({ nodeId: 4, clock, resumeAfterMs: 1_700_000_000_000, maxDriftTicks: 1 })
  assert.equal(generator.decode(generator.nextId()).timestampMs, 1_700_000_000_001)
})

test('a resumeAfterMs the generator could not reach in time is refused when it is made', () => {
  const clock = new ManualClock(1_700_000_000_000)
  // A minute ahead, with a 5 ms wait: used to be accepted, then every call threw
  // CLOCK_MOVED_BACKWARDS although the clock had not moved.
  const error = assertThrowsCode(
    () => new Generator({ nodeId: 11, clock, resumeAfterMs: 1_700_000_060_000 }),
    RangeError,
    'ERR_FERROFLAKE_RESUME_IN_FUTURE',
  )
  assert.match(error.message, /60000 ms ahead/)
  assertThrowsCode(
    () => new Generator({ nodeId: 11, clock, resumeAfterMs: 2n ** 64n - 1n, maxBackwardWaitMs: 2n ** 64n - 1n }),
    RangeError,
    'ERR_FERROFLAKE_LAYOUT_EXHAUSTED',
  )
})

test('the largest maxBackwardWaitMs and ticks near 2^64 give IDs or coded errors, never a crash', () => {
  const MAX = 2n ** 64n - 1n
  const clock = new ManualClock(1_700_000_000_000)
  // tick + maxBackwardWaitMs overflowed in the core: a panic (debug) or a false
  // CLOCK_STALLED (release) where a 1 ms wait was due.
  const generator = new Generator({ nodeId: 12, clock, maxBackwardWaitMs: MAX })
  const ids = generator.nextIds(257) // js53ms: 256 per ms, then one wait
  assert.equal(new Set(ids).size, 257)
  assert.equal(generator.decode(ids.at(-1)).timestampMs, 1_700_000_000_001)
  clock.rewindMs(3_600_000) // an hour back: waited out, "as long as it takes" up to a day
  assert.ok(generator.nextId() > ids.at(-1))
  clock.rewindMs(2 * 86_400_000)
  assertThrowsCode(() => generator.nextId(), Error, 'ERR_FERROFLAKE_CLOCK_MOVED_BACKWARDS')
  for (const [nodeId, tickMs] of [[13, MAX], [14, MAX / 2n], [15, 2n * 86_400_000n]]) {
    const layout = Layout.custom({ timeBits: 1, nodeBits: 4, sequenceBits: 1, tickMs, epochMs: 1_699_999_999_000 })
    const huge = new Generator({ nodeId, layout, clock: new ManualClock(1_700_000_000_000), maxBackwardWaitMs: MAX })
    assert.equal(huge.nextIdBigInt(), BigInt(nodeId) << 1n | 1n, 'sequence 1 of tick 0')
    // The next tick is more than a day away: a coded error at once, not a wait.
    assertThrowsCode(() => huge.nextIdBigInt(), Error, 'ERR_FERROFLAKE_CLOCK_STALLED')
  }
})

test('resumeAfterId puts a generator above an old generator\'s highest ID', () => {
  const twitter = Layout.preset('twitter')
  const sonyflake = Layout.preset('sonyflake')
  const nowMs = 1_700_000_000_000
  // A sonyflake fleet's highest ID: the last sequence number of its 10 ms tick.
  const oldId = sonyflake.compose({ timestampMs: nowMs, nodeId: 3, sequence: 255 })
  const after = twitter.resumeAfterId(oldId, sonyflake)
  assert.equal(after, nowMs + 9)
  assert.equal(twitter.resumeAfterId(oldId.toString(), 'sonyflake'), after)
  const generator = new Generator({ nodeId: 900, layout: twitter, clock: new ManualClock(after), resumeAfterMs: after })
  const first = generator.nextIdBigInt()
  assert.ok(first > oldId)
  assert.ok(twitter.decode(first).timestampMs > nowMs + 9)
  // Without an old layout the ID is read with this one.
  assert.equal(twitter.resumeAfterId(first), twitter.decode(first).timestampMs)
  assertThrowsCode(() => Layout.preset('js53').resumeAfterId(2n ** 60n), RangeError, 'ERR_FERROFLAKE_ID_OUT_OF_RANGE')
  assertThrowsCode(() => twitter.resumeAfterId(1, 7), TypeError, 'ERR_FERROFLAKE_INVALID_TYPE')
  generator.close()
})

test('Layout.custom and compose/decode round-trip; toJSON describes it', () => {
  const layout = Layout.custom({ timeBits: 40, nodeBits: 6, sequenceBits: 7, tickMs: 10, epochMs: 1_600_000_000_000n, order: 'sequence_then_node' })
  assert.equal(layout.totalBits, 53)
  assert.equal(layout.isJsSafe, true)
  assert.equal(layout.maxNode, 63)
  assert.equal(layout.capacityPerSecond, 12_800)
  const id = layout.compose({ timestampMs: 1_700_000_000_019, nodeId: 5, sequence: 100 })
  assert.deepEqual({ ...layout.decode(id), date: undefined }, { timestampMs: 1_700_000_000_010, nodeId: 5, sequence: 100, shard: 0, date: undefined })
  assert.equal(JSON.parse(JSON.stringify(layout)).order, 'sequence_then_node')
})

test("the 'fast' clock gives IDs near real time", () => {
  const generator = new Generator({ nodeId: 5, clock: 'fast', layout: 'js53' })
  assert.equal(generator.clock, 'fast')
  assert.ok(Math.abs(generator.decode(generator.nextId()).timestampMs - Date.now()) <= 2_000)
})

test('two Generators for one node in one process share the core generator', () => {
  const a = new Generator({ nodeId: 6 })
  const b = new Generator({ nodeId: 6 })
  assert.equal(a.isShared, false)
  assert.equal(b.isShared, true)
  const ids = []
  for (let i = 0; i < 1000; i++) ids.push(a.nextId(), b.nextId())
  assert.equal(new Set(ids).size, ids.length)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'one sequence across both')
  assertThrowsCode(() => new Generator({ nodeId: 6, maxDriftTicks: 5 }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  assertThrowsCode(() => new Generator({ nodeId: 6, clock: 'fast' }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  // A node id is one node whatever the layout: js53 and js53ms IDs are both integers below
  // 2^53 and can be equal, so a second layout on the node is refused too.
  const error = assertThrowsCode(() => new Generator({ nodeId: 6, layout: 'js53' }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  assert.match(error.message, /node id 6 .*layout 'js53ms', the system clock/)
})

test('a system-clock and a manual-clock Generator cannot share a node id', () => {
  // Both used to be accepted: the manual one lived outside the registry, and with its clock
  // at the system's time the two issued the very same IDs.
  const system = new Generator({ nodeId: 7 })
  const clock = new ManualClock(Date.now())
  assertThrowsCode(() => new Generator({ nodeId: 7, clock }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  const manual = new Generator({ nodeId: 9, clock })
  assertThrowsCode(() => new Generator({ nodeId: 9 }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  assertThrowsCode(() => new Generator({ nodeId: 9, clock: new ManualClock(Date.now()) }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  // The same ManualClock object and options: one core generator, shared.
  const again = new Generator({ nodeId: 9, clock })
  assert.equal(again.isShared, true)
  const ids = [manual.nextId(), again.nextId(), manual.nextId()]
  assert.ok(ids[0] < ids[1] && ids[1] < ids[2], 'one sequence across both')
  assert.equal(typeof system.nextId(), 'number')
})

test('two layouts that differ only in their epoch cannot share a node id', () => {
  // Same widths and tick, epochs 10 ms apart: the second would issue, 10 ms later, the
  // IDs the first issued. Both used to be accepted (the registry keyed on the layout).
  const spec = { timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: FERROFLAKE_EPOCH_MS }
  const a = new Generator({ nodeId: 20, layout: Layout.custom(spec) })
  const shifted = Layout.custom({ ...spec, epochMs: FERROFLAKE_EPOCH_MS + 10 })
  const error = assertThrowsCode(() => new Generator({ nodeId: 20, layout: shifted }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  // The message names the holder's layout by its spelling, which reads back to it.
  const named = "layout '41/10/12@2020-01-01T00:00:00Z'"
  assert.ok(error.message.includes(named), error.message)
  assert.ok(Layout.preset('41/10/12@2020-01-01T00:00:00Z').equals(Layout.custom(spec)))
  assert.equal(new Generator({ nodeId: 20, layout: Layout.custom(spec) }).isShared, true, 'an equal layout shares')
  assert.equal(typeof a.nextIdBigInt(), 'bigint')
})

/** Makes a Generator in a frame of its own (a suspended async frame would keep it alive),
 * issues one ID and drops it. */
function issueOnceAndDrop(options) {
  return new Generator(options).nextIdBigInt()
}

/** Calls `make` until the node's earlier Generators are collected (finalizers run after a
 * GC, on a later turn): returns its result, or rethrows any other error. */
async function afterCollection(make) {
  for (let attempt = 0; ; attempt++) {
    try {
      return make()
    } catch (error) {
      const live = error.code === 'ERR_FERROFLAKE_NODE_IN_USE' && /live generator/.test(error.message)
      if (!live || attempt >= 50 || !globalThis.gc) throw error
    }
    globalThis.gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
}

test('once its Generators are collected, a node id takes another clock, layout or options', { skip: !globalThis.gc && 'needs --expose-gc' }, async () => {
  const t0 = Date.now() + 60_000 // a minute ahead of the system clock
  const last = issueOnceAndDrop({ nodeId: 30, layout: 'twitter', clock: new ManualClock(t0) })
  // Another layout and clock: accepted once the first is gone. It continues after the
  // instant of the last ID issued, so it cannot repeat it.
  const discord = Layout.preset('discord')
  const after = await afterCollection(() => issueOnceAndDrop({ nodeId: 30, layout: discord, clock: new ManualClock(t0 + 3) }))
  assert.equal(discord.decode(after).timestampMs, t0 + 3)
  assert.equal(Layout.preset('twitter').decode(last).timestampMs, t0)
  // A clock behind those IDs (the system clock, a minute behind) could repeat them: refused.
  const refused = await afterCollection(() => {
    try {
      new Generator({ nodeId: 30, layout: 'twitter' }) // eslint-disable-line no-new
    } catch (error) {
      if (/live generator/.test(error.message)) throw error
      return error
    }
    return assert.fail('a generator whose clock is behind the node\'s IDs was accepted')
  })
  assert.equal(refused.code, 'ERR_FERROFLAKE_NODE_IN_USE')
  assert.match(refused.message, /node id 30 issued IDs up to \d+ ms .* could repeat them/)
})

test('a node whose Generators were collected continues after their IDs, even with new options', async () => {
  let last
  {
    const first = new Generator({ nodeId: 8 })
    last = first.nextId()
  }
  // Let the first Generator be collected if a GC is exposed; either way the entry is kept.
  if (globalThis.gc) { globalThis.gc(); await new Promise((resolve) => setImmediate(resolve)) }
  const again = new Generator({ nodeId: 8 })
  assert.ok(again.nextId() > last)
})

test('a class called without new throws a coded TypeError and takes nothing', () => {
  const key = '1:00112233445566778899aabbccddeeff'
  const calls = [
    ['Generator', () => addon.Generator({ nodeId: 5 })],
    ['Generator', () => Generator({ nodeId: 5 })],
    ['ManualClock', () => addon.ManualClock(5)],
    ['MaskKeyring', () => addon.MaskKeyring(key)],
  ]
  for (const [name, call] of calls) {
    const error = assertThrowsCode(call, TypeError, 'ERR_FERROFLAKE_INVALID_TYPE')
    assert.match(error.message, new RegExp(`call it with \`new ${name}\\(\\.\\.\\.\\)\``))
  }
  // The module's exports did not become a generator, and node id 5 is free for any layout.
  assert.equal(typeof addon.nextId, 'undefined')
  const other = new Generator({ nodeId: 5, layout: 'twitter' })
  assert.equal(other.nodeId, 5)
  other.close()
})

test('a layout comes from its factories; new Layout() and a bare call are coded TypeErrors', () => {
  for (const call of [() => new Layout(), () => new Layout({}), () => addon.Layout({})]) {
    const error = assertThrowsCode(call, TypeError, 'ERR_FERROFLAKE_INVALID_TYPE')
    assert.match(error.message, /Layout\.preset\(name\)` or `Layout\.custom\(spec\)/)
  }
  // The factories still make layouts, which are still Layouts.
  const twitter = Layout.preset('twitter')
  assert.ok(twitter instanceof Layout)
  assert.equal(twitter.toString(), Layout.preset(twitter.toString()).toString())
})

test('a class called on an instance it already made throws a coded TypeError and takes nothing', () => {
  const existing = new Generator({ nodeId: 15 })
  const error = assertThrowsCode(() => Generator.call(existing, { nodeId: 16 }), TypeError, 'ERR_FERROFLAKE_INVALID_TYPE')
  assert.match(error.message, /already is a Generator/)
  assert.equal(existing.nodeId, 15)
  // Node id 16 was not claimed: any layout takes it at once.
  const other = new Generator({ nodeId: 16, layout: 'twitter' })
  other.close()
  const clock = new ManualClock(1_700_000_000_000)
  assertThrowsCode(() => ManualClock.call(clock, 5), TypeError, 'ERR_FERROFLAKE_INVALID_TYPE')
  assert.equal(clock.nowMs, 1_700_000_000_000)
  existing.close()
})

test('a batch takes at most one second of its layout\'s IDs, so it never holds the event loop longer', () => {
  const generator = new Generator({ nodeId: 14, layout: 'js53ms', clock: new ManualClock(1_700_000_000_000) })
  const { sequenceBits, tickMs } = generator.layout.toJSON()
  const perSecond = 2 ** sequenceBits * (1000 / tickMs)
  assert.equal(perSecond, 256_000)
  assert.equal(generator.nextIds(perSecond).length, perSecond)
  const error = assertThrowsCode(() => generator.nextIds(perSecond + 1), RangeError, 'ERR_FERROFLAKE_OUT_OF_RANGE')
  assert.match(error.message, /at most 256000 for this layout, got 256001/)
  assertThrowsCode(() => generator.nextIdsBigInt(perSecond + 1), RangeError, 'ERR_FERROFLAKE_OUT_OF_RANGE')
  generator.close()
})

test('the bound nextId functions are methods, not classes: `new` throws, issuing nothing', () => {
  const generator = new Generator({ nodeId: 13 })
  const before = generator.nextId()
  for (const name of ['nextId', 'nextIdBigInt', 'nextIdString']) {
    const bound = generator[name]
    assertThrowsCode(() => new bound(), TypeError, 'ERR_FERROFLAKE_INVALID_TYPE')
  }
  const after = generator.nextId()
  assert.ok(after > before, `${after} follows ${before}`)
  generator.close()
})
