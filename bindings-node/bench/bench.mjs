// Call cost of ferroflake's Node face next to Date.now() and the ID generators a Node user
// would otherwise pick, all in one run, with each one's duplicates over 1,000,000 IDs:
// the plain Generator, a LeasedGenerator (node id leased from an embedded registry in a
// temp folder) and a segment key (SQLite file in a temp folder, step 1,000,000); beside
// them, MaskKeyring mask()/unmask() of consecutive IDs (a fixed test key).
// Run: cd bindings-node/bench && npm install --no-audit --no-fund && node --expose-gc bench.mjs
// (after the addon is built: `npm run build` in bindings-node). Not part of the tests.
// With FERROFLAKE_BENCH_REPORT set, the table also goes there as JSON lines (a first line
// with the versions, then one line per subject).
// Then, when FERROFLAKE_BENCH_SERVICE holds the address of a running `ferroflake serve`
// (ferroflake+http://127.0.0.1:PORT/, as benches/service.sh sets it), segments taken over
// HTTP: SegmentKey nextId() on a key of the service's store against one on a local SQLite
// file, both created with table step 100,000 and opened with the default settings (the
// step doubles with each range up to 1,000,000; a warm-up takes them there). The two keys
// take turns in each of ROUNDS rounds, each issuing REMOTE_IDS IDs (default 10,000,000: 10
// ranges, refills included); IDs/s per key and the remote / local ratio, medians over the
// rounds. Around each remote run, the service's CPU time (/proc/PID/stat utime + stime, PID
// in FERROFLAKE_BENCH_SERVICE_PID) and the HTTP requests it answered
// (ferroflake_http_requests_total at /metrics, its scrapes left out).
import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'

const require = createRequire(import.meta.url)
const { Generator, Layout, LeasedGenerator, MaskKeyring, SegmentAllocator } = require('..')
const { Snowflake: SapphireSnowflake } = require('@sapphire/snowflake')
const FlakeId = require('flake-idgen')
const { Snowflake: WasmSnowflake } = require('nodejs-snowflake')

const CALLS = 1_000_000
const ROUNDS = Number(process.env.ROUNDS ?? 7)

// Layouts whose sequence does not run out within a millisecond at these speeds, so the
// timing is the cost of a call, not a layout's rate cap (the capped presets are measured
// in the 1M-ID run below, where the cap shows). A process holds one generator per node id
// (the binding refuses a node id a live generator holds with another layout or clock), so
// each ferroflake subject has its own node id: 3 node bits, taken from the time field
// (30 bits of ms last 12 days from the epoch), the sequence as wide as without them.
const uncapped = (bits, offset) =>
  Layout.custom({ timeBits: bits === 53 ? 30 : 38, nodeBits: 3, sequenceBits: bits === 53 ? 20 : 22, epochMs: Date.now() - 3_600_000 - offset })
// A fresh generator. The uniqueness run below makes a second one of each subject: the
// first is closed then, so its node id is free again.
const made = new Map()
const fresh = (options) => {
  made.get(options.nodeId)?.close()
  const generator = new Generator(options)
  made.set(options.nodeId, generator)
  return generator
}
const layouts = { s53: uncapped(53, 0), f53: uncapped(53, 1), s63: uncapped(63, 2), f63: uncapped(63, 3), str: uncapped(63, 4), batch: uncapped(53, 5), leased: uncapped(53, 6) }
const BATCH = 4000 // divides CALLS
const flakeEpoch = Date.UTC(2020, 0, 1)
const maskKeyring = new MaskKeyring('1:000102030405060708090a0b0c0d0e0f')
/** `call(ring, i)` on consecutive i: distinct IDs, so the 1M run counts real duplicates. */
const counting = (call) => () => { let i = 0; return () => call(maskKeyring, i++) }

// A lease and a segment key, opened once (their uniqueness run reuses them): a new
// registry makes its first claim wait maxTtlMs plus the quarantine, about 2.4 s here. The
// lease takes the registry's first free id, 0, so the plain generators start at 1.
const scratch = mkdtempSync(join(os.tmpdir(), 'ferroflake-bench-'))
const leased = await LeasedGenerator.open({ registry: join(scratch, 'registry'), layout: layouts.leased, ttlMs: 2_000, maxTtlMs: 2_000 })
const segments = await SegmentAllocator.open({ store: join(scratch, 'segments.db') })
await segments.createKey('bench', { step: 1_000_000 })
const segmentKey = await segments.key('bench')

// [name, make (returns a function that makes one ID, or BATCH IDs), timed per call?, batch]
const subjects = [
  ['Date.now()', () => Date.now, true],
  // What nextIdBigInt() is held to: a bigint made in JavaScript from the clock.
  ['floor: BigInt(Date.now()) << 22n', () => () => BigInt(Date.now()) << 22n, true],
  ['ferroflake nextId(), system clock', () => fresh({ nodeId: 1, layout: layouts.s53 }).nextId, true],
  ['ferroflake nextId(), fast clock', () => fresh({ nodeId: 2, layout: layouts.f53, clock: 'fast' }).nextId, true],
  ['ferroflake nextIdBigInt(), system clock', () => fresh({ nodeId: 3, layout: layouts.s63 }).nextIdBigInt, true],
  ['ferroflake nextIdBigInt(), fast clock', () => fresh({ nodeId: 4, layout: layouts.f63, clock: 'fast' }).nextIdBigInt, true],
  ['ferroflake nextIdString(), system clock', () => fresh({ nodeId: 5, layout: layouts.str }).nextIdString, true],
  ['ferroflake LeasedGenerator nextId(), embedded registry', () => leased.nextId, true],
  ['ferroflake SegmentKey nextId(), SQLite, step 1,000,000', () => segmentKey.nextId, true],
  ['ferroflake MaskKeyring mask(id), 53 bits (number)', counting((ring, i) => ring.mask(i)), true],
  ['ferroflake MaskKeyring unmask(masked), 53 bits (number)', counting((ring, i) => ring.unmask(i)), true],
  ['ferroflake MaskKeyring mask(id, { bits: 63 }) (bigint)', counting((ring, i) => ring.mask(i, { bits: 63 })), true],
  ['ferroflake MaskKeyring encode(id) (base62 text, 53 bits)', counting((ring, i) => ring.encode(i)), true],
  [`ferroflake nextIds(${BATCH}), per ID, system clock`, () => { const g = fresh({ nodeId: 6, layout: layouts.batch }); return () => g.nextIds(BATCH) }, true, BATCH],
  ['ferroflake nextId(), default js53ms (256,000/s cap)', () => fresh({ nodeId: 7 }).nextId, false],
  ['ferroflake nextIdBigInt(), twitter (4,096,000/s cap)', () => fresh({ nodeId: 8, layout: 'twitter' }).nextIdBigInt, false],
  ['@sapphire/snowflake generate()', () => { const s = new SapphireSnowflake(flakeEpoch); return () => s.generate() }, true],
  ['flake-idgen next()', () => { const f = new FlakeId({ id: 1, epoch: flakeEpoch }); return () => f.next() }, true],
  ['nodejs-snowflake getUniqueID()', () => { const s = new WasmSnowflake({ custom_epoch: flakeEpoch, instance_id: 1 }); return () => s.getUniqueID() }, true],
  ['crypto.randomUUID()', () => randomUUID, true],
]

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** ns per ID of one loop making CALLS IDs (`batch` per call; it divides CALLS), and how many calls threw. */
function timeOnce(fn, batch = 1) {
  let errors = 0
  const calls = CALLS / batch
  const start = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) {
    try { fn() } catch { errors++ }
  }
  return { ns: Number(process.hrtime.bigint() - start) / CALLS, errors }
}

/** CALLS fresh IDs: duplicates, throws, and ns per ID including the Set insert. */
function uniqueness(fn, batch = 1) {
  const seen = new Set()
  let errors = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < CALLS / batch; i++) {
    let ids
    try { ids = batch === 1 ? [fn()] : fn() } catch { errors += batch; continue }
    for (const id of ids) seen.add(Buffer.isBuffer(id) ? id.toString('hex') : id)
  }
  const ns = Number(process.hrtime.bigint() - start) / CALLS
  return { duplicates: CALLS - errors - seen.size, errors, ns }
}

console.log(`node ${process.version}, ${os.cpus()[0].model}, ${os.cpus().length} cores, load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`)
console.log(`call cost: ${ROUNDS} interleaved rounds of ${CALLS.toLocaleString('en')} IDs each (after a warm-up round); best and median ns per ID; median ratio = median over rounds of (ns / Date.now() ns of that round)`)
console.log(`uniqueness: ${CALLS.toLocaleString('en')} IDs from a fresh instance into a Set\n`)

const timed = subjects.filter(([, , perCall]) => perCall).map(([name, make, , batch]) => ({ name, fn: make(), batch, ns: [], ratio: [], errors: 0 }))
for (let round = 0; round <= ROUNDS; round++) {
  let baseline
  for (const subject of timed) {
    const { ns, errors } = timeOnce(subject.fn, subject.batch)
    baseline ??= ns
    if (round === 0) continue // warm-up: JIT, TSC calibration, first allocations
    subject.ns.push(ns)
    subject.ratio.push(ns / baseline)
    subject.errors += errors
  }
}

const rows = []
const best = (values) => Math.min(...values)
const bestDateNow = best(timed[0].ns)
for (const [name, make, , batch] of subjects) {
  const subject = timed.find((t) => t.name === name)
  globalThis.gc?.()
  // The clock and the floors make no IDs of their own: no uniqueness run.
  const run = name === 'Date.now()' || name.startsWith('floor:') ? null : uniqueness(make(), batch)
  rows.push({
    name,
    'best ns': subject ? best(subject.ns).toFixed(1) : '-',
    'median ns': subject ? median(subject.ns).toFixed(1) : '-',
    'best / best Date.now()': subject ? (best(subject.ns) / bestDateNow).toFixed(2) : '-',
    'median ratio': subject ? median(subject.ratio).toFixed(2) : '-',
    'throws per 1M timed': subject ? Math.round(subject.errors / ROUNDS) : '-',
    'ns/ID over 1M (with Set)': run ? run.ns.toFixed(0) : '-',
    'duplicates in 1M': run ? run.duplicates : '-',
    'throws in 1M': run ? run.errors : '-',
  })
}
console.table(rows)
leased.close()
for (const generator of made.values()) generator.close()
await segments.close()

const REMOTE_STEP = 100_000
const REMOTE_IDS = Number(process.env.REMOTE_IDS ?? 10_000_000)

/** `n` calls of `fn`: IDs/s of the calls that did not throw, and how many threw. */
function issue(fn, n) {
  let errors = 0
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) {
    try { fn() } catch { errors++ }
  }
  return { perSecond: (n - errors) / (Number(process.hrtime.bigint() - start) / 1e9), errors }
}

/** The service's CPU time so far (utime + stime), in clock ticks. */
function serviceTicks(pid) {
  try {
    const rest = readFileSync(`/proc/${pid}/stat`, 'ascii').split(')').pop().trim().split(/\s+/)
    return Number(rest[11]) + Number(rest[12]) // fields 14 and 15; rest starts at field 3
  } catch { return null }
}

/** The HTTP requests the service has answered, but for its /metrics scrapes. */
async function serviceRequests(address) {
  try {
    const answer = await fetch(address.replace('ferroflake+http://', 'http://').replace(/\/$/, '') + '/metrics')
    let total = 0
    for (const line of (await answer.text()).split('\n')) {
      if (line.startsWith('ferroflake_http_requests_total{') && !line.includes('route="/metrics"')) total += Number(line.split(' ').pop())
    }
    return total
  } catch { return null }
}

/** IDs/s from a segment taken over HTTP against a local SQLite key (see the top). */
async function remote(address) {
  const pid = process.env.FERROFLAKE_BENCH_SERVICE_PID ?? ''
  const name = `remote_${process.pid}`
  const allocators = []
  const keys = {}
  try {
    for (const [side, store] of [['local', join(scratch, 'local.db')], ['remote', address]]) {
      const allocator = await SegmentAllocator.open({ store })
      allocators.push(allocator)
      await allocator.createKey(name, { step: REMOTE_STEP })
      keys[side] = await allocator.key(name)
    }
    for (const key of Object.values(keys)) issue(key.nextId, 4_000_000) // ranges of 100,000 to 800,000
    const before = { local: keys.local.status(), remote: keys.remote.status() }
    const rates = { local: [], remote: [] }
    const ratios = []
    let errors = 0
    let requests = 0
    let ticks = 0
    for (let round = 0; round < ROUNDS; round++) {
      const local = issue(keys.local.nextId, REMOTE_IDS)
      const requestsBefore = await serviceRequests(address)
      const ticksBefore = serviceTicks(pid)
      const far = issue(keys.remote.nextId, REMOTE_IDS)
      const ticksAfter = serviceTicks(pid)
      const requestsAfter = await serviceRequests(address)
      requests = [requests, requestsBefore, requestsAfter].includes(null) ? null : requests + requestsAfter - requestsBefore
      ticks = [ticks, ticksBefore, ticksAfter].includes(null) ? null : ticks + ticksAfter - ticksBefore
      errors += local.errors + far.errors
      rates.local.push(local.perSecond)
      rates.remote.push(far.perSecond)
      ratios.push(far.perSecond / local.perSecond)
    }
    const after = { local: keys.local.status(), remote: keys.remote.status() }
    const tck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'ascii' }).trim())
    return {
      kind: 'remote',
      face: 'node',
      status: 'measured',
      table_step: REMOTE_STEP,
      step: after.remote.step,
      rounds: ROUNDS,
      ids_per_run: REMOTE_IDS,
      local_per_second: median(rates.local),
      remote_per_second: median(rates.remote),
      ratio: median(ratios),
      local_fetches: after.local.fetches - before.local.fetches,
      remote_fetches: after.remote.fetches - before.remote.fetches,
      local_waits: after.local.waits - before.local.waits,
      remote_waits: after.remote.waits - before.remote.waits,
      errors,
      service_ids: ROUNDS * REMOTE_IDS - errors,
      service_requests: requests,
      service_cpu_s: ticks === null ? null : ticks / tck,
      clk_tck: tck,
    }
  } finally {
    await Promise.all(allocators.map((allocator) => allocator.close()))
  }
}

const service = process.env.FERROFLAKE_BENCH_SERVICE
const remoteRow = service ? await remote(service) : { kind: 'remote', face: 'node', status: 'skipped', detail: 'FERROFLAKE_BENCH_SERVICE not set' }
if (remoteRow.status === 'measured') {
  const r = remoteRow
  console.log(`\nSegmentKey nextId(), table step ${REMOTE_STEP.toLocaleString('en')} (step now ${r.step.toLocaleString('en')}), ${ROUNDS} rounds of ${REMOTE_IDS.toLocaleString('en')} IDs per key:` +
    ` local SQLite ${(r.local_per_second / 1e6).toFixed(2)} M IDs/s, over HTTP ${(r.remote_per_second / 1e6).toFixed(2)} M IDs/s, remote / local ${r.ratio.toFixed(3)};` +
    ` fetches ${r.local_fetches} local, ${r.remote_fetches} remote; errors ${r.errors}; the service: ${r.service_requests} requests, ${r.service_cpu_s} s CPU`)
} else {
  console.log(`\nsegments over HTTP: skipped (${remoteRow.detail})`)
}
rmSync(scratch, { recursive: true, force: true })

if (process.env.FERROFLAKE_BENCH_REPORT) {
  const version = (name) => JSON.parse(readFileSync(new URL(`./node_modules/${name}/package.json`, import.meta.url), 'utf8')).version
  const versions = { node: process.version, ferroflake: require('../package.json').version }
  for (const name of ['@sapphire/snowflake', 'flake-idgen', 'nodejs-snowflake']) versions[name] = version(name)
  const lines = [{ kind: 'run', rounds: ROUNDS, calls: CALLS, versions }]
  for (const [name, , perCall] of subjects) {
    const subject = timed.find((t) => t.name === name)
    const row = rows.find((r) => r.name === name)
    lines.push({
      kind: 'subject',
      name,
      timed: perCall,
      best_ns: subject ? best(subject.ns) : null,
      median_ns: subject ? median(subject.ns) : null,
      median_ratio: subject ? median(subject.ratio) : null,
      throws_per_1m_timed: subject ? subject.errors / ROUNDS : null,
      set_ns_per_id: row['ns/ID over 1M (with Set)'] === '-' ? null : Number(row['ns/ID over 1M (with Set)']),
      duplicates: row['duplicates in 1M'] === '-' ? null : row['duplicates in 1M'],
      throws_in_1m: row['throws in 1M'] === '-' ? null : row['throws in 1M'],
    })
  }
  lines.push(remoteRow)
  writeFileSync(process.env.FERROFLAKE_BENCH_REPORT, lines.map((line) => JSON.stringify(line) + '\n').join(''))
}
