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

// Not a guarantee but the misuse it rules out, shown deterministically: two processes on
// one node id whose clocks read the same millisecond make the same IDs, in the same order.
test('two processes with the SAME node id at the same instant make the SAME IDs: each process needs its own', async () => {
  const clockMs = 1_700_000_000_000
  const run = (nodeId) =>
    execFileAsync(process.execPath, [fixture('child-manual-ids.cjs'), nodeId, clockMs, 256])
      .then(({ stdout }) => JSON.parse(stdout))
  const [a, b, c] = await Promise.all([run(3), run(3), run(4)])
  assert.equal(a.length, 256)
  assert.deepEqual(b, a, 'two processes on node 3 at one instant')
  const seen = new Set(a)
  assert.equal(c.filter((id) => seen.has(id)).length, 0, 'node 4 at the same instant shares no ID with node 3')
})

test('two processes with distinct node ids never repeat', async () => {
  const { duplicates } = await twoProcesses(3, 4)
  assert.equal(duplicates, 0)
})
