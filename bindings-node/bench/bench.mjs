// Call cost of ferroflake's Node face next to Date.now() and the ID generators a Node user
// would otherwise pick, all in one run, with each one's duplicates over 1,000,000 IDs.
// Run: cd bindings-node/bench && npm install --no-audit --no-fund && node bench.mjs
// (after the addon is built: `npm run build` in bindings-node). Not part of the tests.
import { createRequire } from 'node:module'
import { randomUUID } from 'node:crypto'
import os from 'node:os'

const require = createRequire(import.meta.url)
const { Generator, Layout } = require('..')
const { Snowflake: SapphireSnowflake } = require('@sapphire/snowflake')
const FlakeId = require('flake-idgen')
const { Snowflake: WasmSnowflake } = require('nodejs-snowflake')

const CALLS = 1_000_000
const ROUNDS = Number(process.env.ROUNDS ?? 5)

// Layouts whose sequence never runs out within a millisecond at these speeds, so the
// timing is the cost of a call, not the layout's rate cap (which the capped rows show).
const epochMs = Date.now() - 3_600_000 // 33 time bits in ms last 99 days from here
const uncapped53 = Layout.custom({ timeBits: 33, nodeBits: 0, sequenceBits: 20, epochMs }) // 1,048,576 per ms, JS-safe
const uncapped63 = Layout.custom({ timeBits: 41, nodeBits: 0, sequenceBits: 22, epochMs }) // 4,194,304 per ms

let node = 0
const generator = (options) => new Generator({ nodeId: 0, ...options })
const subjects = [
  ['Date.now()', () => Date.now],
  ['ferroflake nextId() (53-bit, system clock)', () => generator({ layout: uncapped53 }).nextId],
  ['ferroflake nextId() (53-bit, fast clock)', () => generator({ layout: Layout.custom({ timeBits: 33, nodeBits: 0, sequenceBits: 20, epochMs: epochMs + 1 }), clock: 'fast' }).nextId],
  ['ferroflake nextIdBigInt() (63-bit, system clock)', () => generator({ layout: uncapped63 }).nextIdBigInt],
  ['ferroflake nextIdBigInt() (63-bit, fast clock)', () => generator({ layout: Layout.custom({ timeBits: 41, nodeBits: 0, sequenceBits: 22, epochMs: epochMs + 1 }), clock: 'fast' }).nextIdBigInt],
  ['ferroflake nextIdString() (63-bit, system clock)', () => { const g = generator({ layout: Layout.custom({ timeBits: 41, nodeBits: 0, sequenceBits: 22, epochMs: epochMs + 2 }) }); return () => g.nextIdString() }],
  ['ferroflake nextId() default js53ms (capped 256,000/s)', () => new Generator({ nodeId: ++node }).nextId],
  ['ferroflake nextIdBigInt() twitter (capped 4,096,000/s)', () => new Generator({ nodeId: ++node, layout: 'twitter' }).nextIdBigInt],
  ['@sapphire/snowflake generate()', () => { const s = new SapphireSnowflake(epochMs); return () => s.generate() }],
  ['flake-idgen next()', () => { const f = new FlakeId({ id: 1, epoch: epochMs }); return () => f.next() }],
  ['nodejs-snowflake getUniqueID()', () => { const s = new WasmSnowflake({ custom_epoch: epochMs, instance_id: 1 }); return () => s.getUniqueID() }],
  ['crypto.randomUUID()', () => randomUUID],
]

/** ns per call: the median of ROUNDS timed loops of CALLS calls. Thrown errors are counted. */
function time(make) {
  const fn = make()
  let errors = 0
  let sink
  const perRound = []
  for (let round = 0; round <= ROUNDS; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < CALLS; i++) {
      try { sink = fn() } catch { errors++ }
    }
    const ns = Number(process.hrtime.bigint() - start) / CALLS
    if (round > 0) perRound.push(ns) // round 0 warms up the JIT
  }
  perRound.sort((a, b) => a - b)
  return { ns: perRound[Math.floor(perRound.length / 2)], errors, sink }
}

/** Duplicates among CALLS fresh IDs from a fresh instance (and how many calls threw). */
function duplicates(make) {
  const fn = make()
  const seen = new Set()
  let errors = 0
  for (let i = 0; i < CALLS; i++) {
    let id
    try { id = fn() } catch { errors++; continue }
    seen.add(Buffer.isBuffer(id) ? id.toString('hex') : id)
  }
  return { duplicates: CALLS - errors - seen.size, errors }
}

console.log(`node ${process.version}, ${os.cpus()[0].model}, ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`)
console.log(`ns per call: median of ${ROUNDS} x ${CALLS.toLocaleString('en')} calls; duplicates and throws over ${CALLS.toLocaleString('en')} IDs from a fresh instance\n`)
const rows = []
let baseline
for (const [name, make] of subjects) {
  const { ns, errors } = time(make)
  baseline ??= ns
  const dup = name === 'Date.now()' ? { duplicates: '-', errors: 0 } : duplicates(make)
  rows.push({ name, 'ns/call': ns.toFixed(1), 'x Date.now()': (ns / baseline).toFixed(2), 'duplicates in 1M': dup.duplicates, 'throws in 1M': dup.errors, 'throws while timed': errors })
  globalThis.gc?.()
}
console.table(rows)
