// index.d.ts and index.js are napi's output, committed. The committed copies must match
// what napi writes from the Rust source: the release build's output when
// FERROFLAKE_NAPI_OUTPUT names it (scripts/release.sh writes it beside the addon it ships,
// and scripts/test-node.sh passes it), otherwise a fresh build into a temp folder, without
// the `stores` feature: it changes which addresses the addon opens at run time, not one
// exported name or type, and without it the build needs no store client.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packageDir = fileURLToPath(new URL('..', import.meta.url))

function assertMatches(out) {
  for (const file of ['index.d.ts', 'index.js']) {
    const fresh = readFileSync(join(out, file), 'utf8')
    const committed = readFileSync(join(packageDir, file), 'utf8')
    assert.equal(committed, fresh, `${file} is stale: run \`npm run build\` in bindings-node and commit it`)
  }
}

test('committed index.d.ts and index.js match napi\'s output', { timeout: 600_000 }, () => {
  const released = process.env.FERROFLAKE_NAPI_OUTPUT
  if (released) {
    assertMatches(released)
    return
  }
  const out = mkdtempSync(join(tmpdir(), 'ferroflake-dts-'))
  try {
    const napi = join(packageDir, 'node_modules', '.bin', 'napi')
    execFileSync(napi, ['build', '--platform', '--release', '--no-default-features', '--output-dir', out], {
      cwd: packageDir,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    assertMatches(out)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})
