// worker_threads share one core generator per (layout, node id): no duplicates across
// threads. Processes do not share memory, so each needs its own node id.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Worker } from 'node:worker_threads'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
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

const execFileAsync = promisify(execFile)

async function twoProcesses(nodeA, nodeB) {
  const startAtMs = Date.now() + 1_500 // both have loaded the addon by then
  const run = (nodeId) =>
    execFileAsync(process.execPath, [fixture('child-ids.cjs'), nodeId, startAtMs, 300], { maxBuffer: 64 << 20 })
      .then(({ stdout }) => JSON.parse(stdout))
  const [a, b] = await Promise.all([run(nodeA), run(nodeB)])
  assert.ok(a.length > 1000 && b.length > 1000, `both made IDs (${a.length}, ${b.length})`)
  const seen = new Set(a)
  return { duplicates: b.filter((id) => seen.has(id)).length, total: a.length + b.length }
}

test('two processes with the SAME node id repeat IDs: each process needs its own', async () => {
  const { duplicates, total } = await twoProcesses(3, 3)
  assert.ok(duplicates > 0, `expected collisions between two processes on node 3 (${total} IDs)`)
})

test('two processes with distinct node ids never repeat', async () => {
  const { duplicates } = await twoProcesses(3, 4)
  assert.equal(duplicates, 0)
})
