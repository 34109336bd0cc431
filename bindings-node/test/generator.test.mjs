// Generator options and behaviour: clocks, drift, fences, resume, counters, and the
// in-process registry that makes two Generators for one node share a core generator.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addon, assertThrowsCode } from './support.mjs'

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
  const generator = new Generator({ nodeId: 1, clock, maxBackwardWaitMs: 5 })
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
  assert.equal(new Generator({ nodeId: 6, layout: 'js53' }).isShared, false, 'another layout is another node space')
  assertThrowsCode(() => new Generator({ nodeId: 6, maxDriftTicks: 5 }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
  assertThrowsCode(() => new Generator({ nodeId: 6, clock: 'fast' }), Error, 'ERR_FERROFLAKE_NODE_IN_USE')
})

test('manual-clock Generators stay outside the registry', () => {
  const clock = new ManualClock(1_700_000_000_000)
  const a = new Generator({ nodeId: 7, clock })
  const b = new Generator({ nodeId: 7, clock })
  assert.equal(b.isShared, false)
  assert.equal(a.nextId(), b.nextId(), 'two manual generators for one node repeat: the test owns time')
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
