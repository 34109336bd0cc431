// Processes share no memory, so nothing in the addon can keep two processes with one node id
// apart: each process needs its own node id (from the deployment or a lease).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'

const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const execFileAsync = promisify(execFile)

async function twoProcesses(nodeA, nodeB) {
  const startAtMs = Date.now() + 2_500 // both have loaded the addon by then, even on a busy machine
  const run = (nodeId) =>
    execFileAsync(process.execPath, [fixture('child-ids.cjs'), nodeId, startAtMs, 500], { maxBuffer: 64 << 20 })
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
