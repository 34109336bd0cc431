// worker_threads share one core generator per (layout, node id): no duplicates across
// threads.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { fileURLToPath } from 'node:url'
import { addon } from './support.mjs'

const { Generator } = addon
const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

function runWorker(options, count) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(fixture('worker-ids.mjs'), { workerData: { options, count } })
    worker.once('message', resolve)
    worker.once('error', reject)
    worker.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
  })
}

test('4 workers and the main thread on one node id: 250,000 IDs, no duplicates', async () => {
  const main = new Generator({ nodeId: 5 })
  const perThread = 50_000
  const running = Array.from({ length: 4 }, () => runWorker({ nodeId: 5 }, perThread))
  const mainIds = Array.from({ length: perThread }, () => main.nextId())
  const results = await Promise.all(running)
  const all = [...mainIds]
  for (const result of results) {
    assert.equal(result.error, undefined, JSON.stringify(result.error))
    assert.equal(result.isShared, true, 'the worker joined the main thread\'s generator')
    assert.equal(result.ids.length, perThread)
    for (let i = 1; i < result.ids.length; i++) assert.ok(result.ids[i] > result.ids[i - 1])
    all.push(...result.ids)
  }
  assert.ok(all.every(Number.isSafeInteger))
  assert.equal(new Set(all).size, 5 * perThread, 'no ID is repeated across threads')
})

test('a worker asking for a live node id with other options is refused', async () => {
  const main = new Generator({ nodeId: 9 })
  main.nextId()
  const result = await runWorker({ nodeId: 9, maxDriftTicks: 2 }, 1)
  assert.deepEqual(
    { name: result.error?.name, code: result.error?.code },
    { name: 'Error', code: 'ERR_FERROFLAKE_NODE_IN_USE' },
  )
})

test('terminating a worker in the middle of issuing leaves the process and the node sound', async () => {
  const worker = new Worker(fixture('worker-spin.mjs'), { workerData: { options: { nodeId: 11 } } })
  const workerId = await new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  await new Promise((resolve) => setTimeout(resolve, 50))
  await worker.terminate() // its Generator and bound functions are finalized with its env
  const after = new Generator({ nodeId: 11 })
  assert.equal(after.isShared, false, 'the worker\'s generator was given back with its env')
  const id = after.nextId()
  assert.ok(id > workerId, 'continues after the IDs the worker issued')
  assert.ok(after.lastIssuedMs >= after.decode(workerId).timestampMs)
})
