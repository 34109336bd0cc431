// Leased generators: node ids from an embedded registry in a temp folder, shared by the
// threads of one process, distinct between processes, fenced when the lease is lost, and
// released when the last user closes or the process ends.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { addon } from './support.mjs'

const { LeasedGenerator, Layout } = addon
const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const execFileAsync = promisify(execFile)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const folders = []
/** A fresh registry folder. */
function registryDir() {
  const dir = mkdtempSync(join(tmpdir(), 'ferroflake-node-lease-'))
  folders.push(dir)
  return dir
}
after(() => folders.forEach((dir) => rmSync(dir, { recursive: true, force: true })))

/** Whether an embedded registry's records show a node id held: null before any claim. */
function held(dir) {
  let records
  try {
    records = JSON.parse(readFileSync(join(dir, 'leases.json'), 'utf8'))
  } catch {
    return null // not written yet (each write is a rename: never half a file)
  }
  const nodes = Object.values(records.nodes ?? {})
  return nodes.length === 0 ? null : nodes.some((node) => node.token != null)
}

/** Polls `condition` until it holds; fails after `withinMs`. */
async function until(what, condition, withinMs = 30_000) {
  const deadline = Date.now() + withinMs
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${withinMs} ms waiting for ${what}`)
    await sleep(10)
  }
}

// Short timings, the same for every holder of a registry (maxTtlMs must agree): a new
// registry makes its first claims wait maxTtlMs plus the quarantine (ttl / 5).
const FAST = { ttlMs: 2_000, maxTtlMs: 2_000 }
// One node id only (no node bits): a second holder must take the first one's id.
const ONE_NODE = { timeBits: 41, nodeBits: 0, sequenceBits: 12, epochMs: 1_577_836_800_000 }

const run = (name, settings) =>
  execFileAsync(process.execPath, [fixture(name), JSON.stringify(settings)], { maxBuffer: 64 << 20, timeout: 60_000 })
    .then(({ stdout }) => JSON.parse(stdout))

function assertNoDuplicates(groups) {
  const seen = new Set()
  let total = 0
  for (const ids of groups) {
    for (const id of ids) {
      assert.ok(Number.isSafeInteger(id), `${id} is a safe integer`)
      seen.add(id)
    }
    total += ids.length
  }
  assert.equal(seen.size, total, 'no ID is repeated')
  return total
}

test('4 processes leasing from one embedded registry: distinct node ids, 0 duplicates', { timeout: 90_000 }, async () => {
  const registry = registryDir()
  const startAtMs = Date.now() + 8_000 // past the new registry's floor (about 2.4 s) and the loads
  const results = await Promise.all(
    Array.from({ length: 4 }, () => run('leased-ids.mjs', { registry, ...FAST, startAtMs, durationMs: 400 })),
  )
  const nodes = results.map((r) => r.nodeId)
  assert.equal(new Set(nodes).size, 4, `distinct node ids: ${nodes}`)
  for (const r of results) assert.ok(r.ids.length > 100, `each process made IDs (${r.ids.length})`)
  const total = assertNoDuplicates(results.map((r) => r.ids))
  for (const r of results) for (const id of r.ids.slice(0, 50)) assert.equal(Layout.default().decode(id).nodeId, r.nodeId)
  assert.ok(total > 400)
})

test('cluster workers leasing from one embedded registry: distinct node ids, 0 duplicates', { timeout: 90_000 }, async () => {
  const registry = registryDir()
  const startAtMs = Date.now() + 8_000
  const results = await run('leased-cluster.cjs', { registry, ...FAST, workers: 3, startAtMs, durationMs: 400 })
  assert.equal(results.length, 3)
  for (const r of results) assert.equal(r.error, undefined, JSON.stringify(r.error))
  assert.equal(new Set(results.map((r) => r.pid)).size, 3, 'three worker processes')
  assert.equal(new Set(results.map((r) => r.nodeId)).size, 3, 'distinct node ids')
  assertNoDuplicates(results.map((r) => r.ids))
})

/** A holder process driven line by line (fixtures/leased-holder.mjs). */
function holder(settings) {
  const child = spawn(process.execPath, [fixture('leased-holder.mjs'), JSON.stringify(settings)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = []
  const waiting = []
  let buffered = ''
  child.stdout.on('data', (chunk) => {
    buffered += chunk
    let newline
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffered.slice(0, newline))
      buffered = buffered.slice(newline + 1)
      const next = waiting.shift()
      if (next) next(line)
      else lines.push(line)
    }
  })
  const read = () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((resolve) => waiting.push(resolve)))
  return {
    child,
    read,
    ask: () => {
      child.stdin.write('next\n')
      return read()
    },
  }
}

test('a holder stopped (SIGSTOP) past its TTL is fenced: after SIGCONT it refuses, and the taker repeats none of its IDs', { timeout: 90_000 }, async (t) => {
  const registry = registryDir()
  const settings = { registry, ttlMs: 1_000, maxTtlMs: 1_000, layout: ONE_NODE }
  const first = holder(settings)
  t.after(() => first.child.kill('SIGKILL'))
  const before = await first.read()
  assert.equal(before.nodeId, 0)
  const answered = await first.ask()
  assert.equal(typeof answered.id, 'number', JSON.stringify(answered))
  const firstIds = [...before.ids, answered.id]

  first.child.kill('SIGSTOP')
  await sleep(2_500) // past the 1 s TTL and the quarantine
  const taker = await run('leased-ids.mjs', { ...settings, startAtMs: 0, durationMs: 200 })
  assert.equal(taker.nodeId, 0, 'the second process took the stopped holder\'s node id')
  assert.ok(taker.ids.length > 0)

  first.child.kill('SIGCONT')
  const refused = await first.ask()
  assert.equal(refused.id, undefined, `the fenced holder issued ${refused.id}`)
  assert.equal(refused.code, 'ERR_FERROFLAKE_LEASE_EXPIRED', refused.message)
  // It stays refused; its status turns 'lost' once its renewal thread, woken after the
  // pause, has heard from the registry that the claim is gone.
  const deadline = Date.now() + 10_000
  let again
  do {
    again = await first.ask()
    assert.equal(again.code, 'ERR_FERROFLAKE_LEASE_EXPIRED', 'and it stays refused')
    if (again.status !== 'lost') await sleep(20)
  } while (again.status !== 'lost' && Date.now() < deadline)
  assert.equal(again.status, 'lost', again.message)
  assertNoDuplicates([firstIds, taker.ids])
  const lowest = taker.ids.reduce((a, b) => Math.min(a, b))
  assert.ok(lowest > firstIds.reduce((a, b) => Math.max(a, b)), 'the taker continues after the stopped holder\'s mark')
})

function runWorker(workerData) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(fixture('leased-worker.mjs'), { workerData })
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
  })
}

test('a state file: one live process at a time, and a holder killed with SIGKILL is resumed at once, above its IDs', { timeout: 90_000 }, async () => {
  const registry = registryDir()
  const stateFile = join(registry + '-state', 'lease.state')
  const settings = { registry, ...FAST, layout: ONE_NODE, stateFile }
  const first = holder(settings)
  const started = await first.read()
  assert.equal(started.nodeId, 0)
  const last = (await first.ask()).id
  await assert.rejects(
    LeasedGenerator.open({ ...settings, layout: Layout.custom(ONE_NODE) }),
    (error) => error.code === 'ERR_FERROFLAKE_LEASE_STATE_FILE' && /another live process/.test(error.message),
  )
  first.child.kill('SIGKILL')
  await new Promise((resolve) => first.child.once('exit', resolve))
  // The one node id is still held at the registry by the killed process's claim: only
  // its state file lets a restart have it now.
  const resumed = await LeasedGenerator.open({ ...settings, layout: Layout.custom(ONE_NODE) })
  try {
    assert.equal(resumed.nodeId, 0)
    assert.ok(resumed.nextId() > last, 'above every ID the killed holder issued')
  } finally {
    resumed.close()
  }
})

test('worker_threads share one lease: the same node id, 0 duplicates, released by the last close', { timeout: 60_000 }, async () => {
  const registry = registryDir()
  const options = { registry, ...FAST }
  const main = await LeasedGenerator.open(options)
  assert.equal(main.isShared, false)
  const count = 20_000
  const running = Array.from({ length: 3 }, () => runWorker({ options, count }))
  const mainIds = Array.from({ length: count }, () => main.nextId())
  const results = await Promise.all(running)
  for (const r of results) {
    assert.equal(r.error, undefined, JSON.stringify(r.error))
    assert.equal(r.isShared, true, 'the worker joined the main thread\'s lease')
    assert.equal(r.nodeId, main.nodeId, 'one node id for the process')
  }
  assertNoDuplicates([mainIds, ...results.map((r) => Array.from(r.ids))])
  assert.equal(main.status().state, 'held')
  main.close()
  assert.equal(main.status().state, 'released')
  // Released: a new lease in this process is a new claim, not a join.
  const next = await LeasedGenerator.open(options)
  assert.equal(next.isShared, false)
  next.close()
})

test('a second open in one process shares the lease; close() and Symbol.dispose give it back', { timeout: 60_000 }, async () => {
  const registry = registryDir()
  const a = await LeasedGenerator.open({ registry, ...FAST })
  const b = await LeasedGenerator.open({ registry, ...FAST })
  assert.equal(b.isShared, true)
  assert.equal(b.nodeId, a.nodeId)
  const ids = [a.nextId(), b.nextId(), a.nextIdBigInt(), b.nextIdString(), ...a.nextIds(3), ...b.nextIdsBigInt(2)].map(Number)
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'increasing across both objects')
  assert.equal(typeof Symbol.dispose, 'symbol', 'Node 20 has Symbol.dispose')
  a[Symbol.dispose]()
  assert.equal(a.isClosed, true)
  assert.equal(b.status().state, 'held', 'b still holds the lease')
  b.close()
  b.close() // twice: nothing more
  assert.equal(b.status().state, 'released')
  for (const call of [() => b.nextId(), () => b.nextIdBigInt(), () => b.nextIdString(), () => b.nextIds(1),
    () => LeasedGenerator.prototype.nextId.call(b)]) {
    assert.throws(call, (e) => e.code === 'ERR_FERROFLAKE_CLOSED' && e.constructor === Error)
  }
})

test('`using` closes a leased generator at the end of its block (where the syntax exists)', async (t) => {
  let usingWorks = true
  try {
    new Function('{ using x = null }')
  } catch {
    usingWorks = false
  }
  if (!usingWorks) {
    t.skip(`this Node (${process.version}) has Symbol.dispose but not the \`using\` syntax`)
    return
  }
  const registry = registryDir()
  const generator = await LeasedGenerator.open({ registry, ...FAST })
  new Function('g', '{ using held = g; held.nextId() }')(generator)
  assert.equal(generator.isClosed, true)
})

test('a process that ends with a lease open exits at once and releases the node id', { timeout: 90_000 }, async () => {
  for (const how of ['end', 'exit']) {
    const registry = registryDir()
    // A long TTL: only a release lets the next holder of the single node id in soon.
    const settings = { registry, ttlMs: 3_000, maxTtlMs: 3_000, layout: ONE_NODE, how }
    const started = Date.now()
    const { stdout } = await execFileAsync(process.execPath, [fixture('leased-exit.mjs'), JSON.stringify(settings)], { timeout: 30_000 })
    const exitedAt = Date.now()
    const { nodeId, at } = JSON.parse(stdout)
    assert.equal(nodeId, 0)
    assert.ok(exitedAt - at < 2_000, `${how}: exited ${exitedAt - at} ms after its last ID (renewal keeps nothing alive)`)
    assert.ok(at - started < 20_000)
    const next = await LeasedGenerator.open({ registry, ttlMs: 3_000, maxTtlMs: 3_000, layout: Layout.custom(ONE_NODE), maxStartWaitMs: 2_000 })
    assert.equal(next.nodeId, 0, `${how}: the node id was released at exit, not left to lapse`)
    next.close()
  }
})

const openRefusals = [
  ['options a number', { registry: undefined, options: 5 }, TypeError, 'INVALID_TYPE'],
  ['registry a number', { registry: 5 }, TypeError, 'INVALID_TYPE'],
  ['unknown option', { registy: '/tmp/x' }, TypeError, 'UNKNOWN_OPTION'],
  ['layout a number', { layout: 3 }, TypeError, 'INVALID_TYPE'],
  ['layout unknown', { layout: 'snowflake' }, RangeError, 'UNKNOWN_LAYOUT'],
  ['ttlMs -1', { ttlMs: -1 }, RangeError, 'OUT_OF_RANGE'],
  ['ttlMs 1.5', { ttlMs: 1.5 }, RangeError, 'NOT_AN_INTEGER'],
  ['ttlMs "1000"', { ttlMs: '1000' }, TypeError, 'INVALID_TYPE'],
  ['ttlMs 2^53', { ttlMs: 2 ** 53 }, RangeError, 'UNSAFE_INTEGER'],
  ['ttlMs 5 (below 10 ms)', { ttlMs: 5 }, RangeError, 'LEASE_INVALID_CONFIG'],
  ['ttlMs above maxTtlMs', { ttlMs: 5_000, maxTtlMs: 1_000 }, RangeError, 'LEASE_INVALID_CONFIG'],
  ['maxDriftTicks -1n', { maxDriftTicks: -1n }, RangeError, 'OUT_OF_RANGE'],
  ['registry relative', { registry: 'relative/dir' }, RangeError, 'LEASE_BAD_ADDRESS'],
  ['registry ftp://', { registry: 'ftp://host/x' }, RangeError, 'LEASE_BAD_ADDRESS'],
  ['registry redis: without //', { registry: 'redis:127.0.0.1' }, RangeError, 'LEASE_BAD_ADDRESS'],
  ['registry empty', { registry: '' }, RangeError, 'LEASE_BAD_ADDRESS'],
  ['registry file:// relative', { registry: 'file://x/y' }, RangeError, 'LEASE_BAD_ADDRESS'],
  ['registry the root', { registry: '/' }, RangeError, 'LEASE_BAD_ADDRESS'],
  ['registry a file', { registry: fileURLToPath(import.meta.url) }, RangeError, 'LEASE_BAD_ADDRESS'],
]

test('bad options to LeasedGenerator.open throw at once, each with its class and code', () => {
  for (const [what, { options, ...fields }, errorClass, name] of openRefusals) {
    const call = () => LeasedGenerator.open(options ?? fields)
    assert.throws(call, (e) => {
      assert.equal(e.constructor, errorClass, `${what}: ${e.constructor.name} ${e.code} ${e.message}`)
      assert.equal(e.code, `ERR_FERROFLAKE_${name}`, `${what}: ${e.message}`)
      return true
    }, what)
  }
  assert.throws(() => new LeasedGenerator(), (e) => e.code === 'ERR_FERROFLAKE_INVALID_TYPE' && e instanceof TypeError)
  const codes = new Set(addon.errorCodes().map((row) => row.code))
  for (const [what, , , name] of openRefusals) assert.ok(codes.has(`ERR_FERROFLAKE_${name}`), `${what}: listed`)
})

test('a start that waits says why, first, in one line on stderr', { timeout: 60_000 }, async () => {
  // A new registry: the first claim waits maxTtlMs plus the quarantine (2.4 s) before issuing.
  const settings = { ...FAST, registry: registryDir(), layout: ONE_NODE, startAtMs: 0, durationMs: 10 }
  const { stdout, stderr } = await execFileAsync(process.execPath, [fixture('leased-ids.mjs'), JSON.stringify(settings)], { timeout: 60_000 })
  assert.equal(JSON.parse(stdout).nodeId, 0)
  assert.match(stderr, /^ferroflake: node id 0: .*; waiting 2s/, stderr)
})

test('settings left out take the lease crate\'s defaults, as in every face', { timeout: 30_000 }, async () => {
  // A new registry's floor is maxTtlMs plus the quarantine: 10 s + 2 s by default, and
  // 20 s + 4 s for a 20 s ttlMs alone (the longest TTL and the quarantine follow it).
  for (const [ttlMs, floorS] of [[undefined, 12], [20_000, 24]]) {
    const settings = { registry: registryDir(), layout: Layout.custom(ONE_NODE), maxStartWaitMs: 1, ttlMs }
    if (ttlMs === undefined) delete settings.ttlMs
    await assert.rejects(LeasedGenerator.open(settings), (e) => {
      assert.equal(e.code, 'ERR_FERROFLAKE_LEASE_START_WAIT_TOO_LONG', e.message)
      const waited = Number(/must wait (\d+)s/.exec(e.message)?.[1])
      assert.ok(waited >= floorS - 1 && waited <= floorS, `ttlMs ${ttlMs}: ${e.message}`)
      return true
    })
  }
})

test('a floor longer than maxStartWaitMs rejects at once with LEASE_START_WAIT_TOO_LONG and gives the id back', { timeout: 30_000 }, async () => {
  const registry = registryDir()
  // A new registry's floor is maxTtlMs plus the quarantine: 20.4 s, against a 100 ms limit.
  const settings = { registry, ttlMs: 2_000, maxTtlMs: 20_000, layout: Layout.custom(ONE_NODE), maxStartWaitMs: 100 }
  for (const attempt of ['first', 'second']) {
    const started = Date.now()
    await assert.rejects(LeasedGenerator.open(settings), (e) => {
      // The second attempt claims the one node id again: the first gave it back.
      assert.equal(e.code, 'ERR_FERROFLAKE_LEASE_START_WAIT_TOO_LONG', `${attempt}: ${e.code} ${e.message}`)
      assert.equal(e.constructor, Error)
      assert.match(e.message, /node id 0: .* longer than max_start_wait 100ms/)
      return true
    })
    assert.ok(Date.now() - started < 10_000, `${attempt}: refused before the floor, not after it`)
  }
})

test('unreachable registries reject with ERR_FERROFLAKE_LEASE_UNAVAILABLE within seconds', { timeout: 60_000 }, async () => {
  for (const registry of ['redis://127.0.0.1:1', 'postgres://nobody@127.0.0.1:1/none', 'etcd://127.0.0.1:1', 'zk://127.0.0.1:1']) {
    const started = Date.now()
    await assert.rejects(LeasedGenerator.open({ registry }), (e) => {
      assert.equal(e.code, 'ERR_FERROFLAKE_LEASE_UNAVAILABLE', `${registry}: ${e.code} ${e.message}`)
      assert.equal(e.constructor, Error)
      return true
    })
    assert.ok(Date.now() - started < 15_000, `${registry}: refused in ${Date.now() - started} ms`)
  }
})

// Inside a container the default registry is one of several on the host (each container
// has its own /var/tmp): refused, saying that IDs can collide and what to use instead; a
// folder named explicitly is accepted. The container is made known by its `container`
// variable (as systemd-nspawn, Podman and LXC set it), in a child process, so the test says
// the same inside CI's container and on a host.
test('the default registry is refused in a container, a named folder is not', { timeout: 60_000 }, async () => {
  const open = (options) =>
    execFileAsync(process.execPath, [fixture('leased-open.mjs'), JSON.stringify(options)], {
      env: { ...process.env, container: 'ferroflake-test' },
      timeout: 60_000,
    }).then(({ stdout }) => JSON.parse(stdout))
  const refused = await open({ ...FAST })
  assert.equal(refused.code, 'ERR_FERROFLAKE_LEASE_UNAVAILABLE', refused.message)
  for (const words of [
    'runs in a container (container=ferroflake-test)',
    "IDs can collide with other containers'",
    'a mounted volume',
    '(etcd://, redis://, zk://, postgres://)',
  ]) {
    assert.ok(refused.message?.includes(words), `${words}: ${refused.message}`)
  }
  assert.deepEqual(await open({ registry: registryDir(), ...FAST }), { opened: true })
})

test('a leased generator refuses bad batch sizes and numbers on wide layouts', { timeout: 60_000 }, async () => {
  const registry = registryDir()
  const generator = await LeasedGenerator.open({ registry, ...FAST })
  const wide = await LeasedGenerator.open({ registry, ...FAST, layout: 'twitter' })
  try {
    const refusals = [
      [() => generator.nextIds(-1), RangeError, 'OUT_OF_RANGE'],
      [() => generator.nextIds(1.5), RangeError, 'NOT_AN_INTEGER'],
      [() => generator.nextIds('3'), TypeError, 'INVALID_TYPE'],
      [() => generator.nextIds(2 ** 30), RangeError, 'OUT_OF_RANGE'],
      [() => generator.nextIdString('hex'), RangeError, 'INVALID_OPTION'],
      [() => wide.nextId(), RangeError, 'UNSAFE_INTEGER'],
      [() => wide.nextIds(2), RangeError, 'UNSAFE_INTEGER'],
    ]
    for (const [call, errorClass, name] of refusals) {
      assert.throws(call, (e) => e.constructor === errorClass && e.code === `ERR_FERROFLAKE_${name}`, `${call}`)
    }
    assert.equal(typeof wide.nextIdBigInt(), 'bigint')
    assert.equal(wide.layout.totalBits, 63)
    assert.notEqual(wide.nodeId, undefined)
  } finally {
    generator.close()
    wide.close()
  }
})

test('a worker ended while its open() waits gives its use of the lease back', { timeout: 60_000 }, async () => {
  const registry = registryDir()
  const options = { registry, ...FAST }
  // A new registry: the open waits out its floor (about 2.4 s) on the thread pool.
  const worker = new Worker(fixture('leased-worker.mjs'), { workerData: { options, count: 1, keep: true } })
  // The open has claimed a node id (the registry records a holder) and waits out the floor.
  await until('the worker\'s claim', () => held(registry) === true)
  await worker.terminate()
  // The open finishes on the pool with nobody to take it: its use is given back, and the
  // registry records the release.
  await until('the ended worker\'s claim to be released', () => held(registry) === false)
  const main = await LeasedGenerator.open(options)
  assert.equal(main.isShared, false, 'no use of the lease was left counted for the ended worker')
  main.close()
})

test('the clock is read against the registry\'s, and one an hour ahead is refused', { timeout: 60_000 }, async () => {
  const registry = registryDir()
  const generator = await LeasedGenerator.open({ ...FAST, registry, layout: Layout.custom(ONE_NODE) })
  const { clockSkewMs, clockSkewUncertaintyMs } = generator.status()
  // The embedded registry's clock is this host's: off by the reading's round trip at most.
  assert.equal(typeof clockSkewMs, 'number')
  assert.ok(Math.abs(clockSkewMs) <= clockSkewUncertaintyMs + 2, `${clockSkewMs} ± ${clockSkewUncertaintyMs}`)
  generator.close()
  assert.equal(generator.status().clockSkewMs, undefined)
  // Bad options throw at once.
  assert.throws(() => LeasedGenerator.open({ ...FAST, registry, maxClockSkewMs: 60_000 }), (e) => {
    assert.equal(e.code, 'ERR_FERROFLAKE_LEASE_INVALID_CONFIG')
    assert.match(e.message, /max_clock_skew/)
    return true
  })

  // libfaketime sets a child's clock an hour ahead; the embedded registry reads the
  // kernel's, which it does not fake.
  const faketime = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1'
  const env = { ...process.env, LD_PRELOAD: faketime, FAKETIME: '+1h', FAKETIME_DONT_FAKE_MONOTONIC: '1' }
  const options = { ...FAST, registry: registryDir() }
  const { stdout } = await execFileAsync(process.execPath, [fixture('leased-open.mjs'), JSON.stringify(options)], { env, timeout: 30_000 })
  const said = JSON.parse(stdout)
  assert.equal(said.code, 'ERR_FERROFLAKE_LEASE_CLOCK_SKEW', stdout)
  // An hour, give or take the reading's few ms: "1h 2ms ahead" or "59m 59s 999ms ahead".
  assert.match(said.message, /: (1h( \d+ms)?|59m 59s \d+ms) ahead/)
})
