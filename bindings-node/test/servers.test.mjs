// Leases and segments on a real Redis, when one is up: FERROFLAKE_TEST_REDIS as
// scripts/servers/with-servers.sh (or `ctl.sh start redis` and `ctl.sh url redis`) sets it.
// Skipped, saying why, when it is not.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { addon } from './support.mjs'

const { SegmentAllocator } = addon
const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const execFileAsync = promisify(execFile)
const redis = process.env.FERROFLAKE_TEST_REDIS
const skip = redis ? false : 'no server: FERROFLAKE_TEST_REDIS is not set (run under scripts/servers/with-servers.sh)'
const run = (name, settings) =>
  execFileAsync(process.execPath, [fixture(name), JSON.stringify(settings)], { maxBuffer: 64 << 20, timeout: 60_000 })
    .then(({ stdout }) => JSON.parse(stdout))

test('two processes leasing from Redis: distinct node ids, 0 duplicates', { skip, timeout: 90_000 }, async () => {
  const registry = `${redis}?prefix=node-test-${process.pid}-${Date.now()}`
  const startAtMs = Date.now() + 8_000
  const settings = { registry, ttlMs: 2_000, maxTtlMs: 2_000, startAtMs, durationMs: 300 }
  const [a, b] = await Promise.all([run('leased-ids.mjs', settings), run('leased-ids.mjs', settings)])
  assert.notEqual(a.nodeId, b.nodeId)
  assert.ok(a.ids.length > 0 && b.ids.length > 0)
  const seen = new Set(a.ids)
  assert.equal(b.ids.filter((id) => seen.has(id)).length, 0)
})

test('two processes on one segment key in Redis: 0 duplicates', { skip, timeout: 90_000 }, async () => {
  // The test Redis runs without an AOF.
  const store = `${redis}?prefix=node-test-${process.pid}-${Date.now()}&accept=lost-writes`
  const allocator = await SegmentAllocator.open({ store })
  await allocator.createKey('orders', { step: 100 })
  await allocator.close()
  const settings = { store, key: 'orders', count: 5_000 }
  const [a, b] = await Promise.all([run('segment-ids.mjs', settings), run('segment-ids.mjs', settings)])
  const seen = new Set(a)
  assert.equal(a.length + b.length, 10_000)
  assert.equal(b.filter((id) => seen.has(id)).length, 0)
})

// Segments through a ferroflake service: FERROFLAKE_TEST_SERVICE, which scripts/test-node.sh
// starts one for.
const service = process.env.FERROFLAKE_TEST_SERVICE
const noService = service ? false : 'no service: FERROFLAKE_TEST_SERVICE is not set (scripts/test-node.sh starts one)'

test('two processes on one segment key through the service: dense, 0 duplicates', { skip: noService, timeout: 90_000 }, async () => {
  const key = `node-test-${process.pid}-${Date.now()}`
  const allocator = await SegmentAllocator.open({ store: service })
  assert.equal(allocator.store, service) // as given, nothing to hide
  await allocator.createKey(key, { step: 100 })
  await allocator.close()
  const settings = { store: service, key, count: 5_000 }
  const [a, b] = await Promise.all([run('segment-ids.mjs', settings), run('segment-ids.mjs', settings)])
  const seen = new Set(a)
  assert.equal(a.length + b.length, 10_000)
  assert.equal(b.filter((id) => seen.has(id)).length, 0)
  // Each gave its unissued rest back: the next IDs continue right after the highest.
  const again = await SegmentAllocator.open({ store: service })
  const next = (await again.key(key)).nextId()
  await again.close()
  assert.ok(next > Math.max(...a, ...b), `${next}`)
})

test('a service that does not answer rejects with a coded error within seconds', { timeout: 60_000 }, async () => {
  const began = Date.now()
  const allocator = await SegmentAllocator.open({ store: 'ferroflake+http://127.0.0.1:1/' })
  await assert.rejects(allocator.key('orders'), (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_UNAVAILABLE')
  await allocator.close()
  assert.ok(Date.now() - began < 15_000)
  // A token in the address would be shown wherever the address is: refused, unshown.
  await assert.rejects(
    async () => SegmentAllocator.open({ store: 'ferroflake+http://127.0.0.1:1/?token=hunter2-secret' }),
    (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_INVALID_CONFIG' && !e.message.includes('hunter2-secret'),
  )
})

test('two processes leasing through the service: distinct node ids, 0 duplicates', { skip: noService, timeout: 90_000 }, async () => {
  const startAtMs = Date.now() + 8_000
  const settings = { registry: service, ttlMs: 2_000, maxTtlMs: 2_000, startAtMs, durationMs: 300 }
  const [a, b] = await Promise.all([run('leased-ids.mjs', settings), run('leased-ids.mjs', settings)])
  assert.notEqual(a.nodeId, b.nodeId)
  assert.ok(a.ids.length > 0 && b.ids.length > 0)
  const seen = new Set(a.ids)
  assert.equal(b.ids.filter((id) => seen.has(id)).length, 0)
})
