// index.d.ts and index.js are napi's output, committed. Regenerate them from the Rust
// source into a temp folder and require the committed copies to match. Built without the
// `stores` feature: it changes which addresses the addon opens at run time, not one
// exported name or type, and without it the build needs no store client.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const packageDir = fileURLToPath(new URL('..', import.meta.url))

test('committed index.d.ts and index.js match a fresh napi build', { timeout: 600_000 }, () => {
  const out = mkdtempSync(join(tmpdir(), 'ferroflake-dts-'))
  try {
    const napi = join(packageDir, 'node_modules', '.bin', 'napi')
    execFileSync(napi, ['build', '--platform', '--release', '--no-default-features', '--output-dir', out], {
      cwd: packageDir,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    for (const file of ['index.d.ts', 'index.js']) {
      const fresh = readFileSync(join(out, file), 'utf8')
      const committed = readFileSync(join(packageDir, file), 'utf8')
      assert.equal(committed, fresh, `${file} is stale: run \`npm run build\` in bindings-node and commit it`)
    }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})
