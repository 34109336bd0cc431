// `npm install` runs this. On a platform with a prebuilt addon, npm has installed that
// platform's package (`optionalDependencies`, picked by its `os`, `cpu` and `libc`), and
// there is nothing to do once it loads. Anywhere else (another platform, a libc the
// prebuilt addon does not run on, a checkout of the repository) the addon is built from the
// Rust sources in this package, with the napi-rs CLI.
'use strict'

const { spawnSync } = require('node:child_process')
const path = require('node:path')

const here = __dirname
const manifest = require('./package.json')

// The per-platform package npm installed for this machine, if it loads here.
function loadablePrebuilt() {
  for (const name of Object.keys(manifest.optionalDependencies || {})) {
    let resolved
    try {
      resolved = require.resolve(name, { paths: [here] })
    } catch {
      continue // not for this platform: npm skipped it
    }
    try {
      require(resolved)
      return name
    } catch (error) {
      // Installed but unusable, e.g. a glibc older than the one it was built for.
      console.warn(`ferroflake: the prebuilt addon ${name} does not load here (${error.message}); building from source`)
    }
  }
  return null
}

function found(command) {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0
}

function build() {
  if (!found('cargo')) {
    console.error(
      `ferroflake: no prebuilt addon for ${process.platform}-${process.arch} ` +
        `(prebuilt: ${Object.keys(manifest.optionalDependencies || {}).join(', ') || 'none'}), ` +
        'and no cargo on PATH to build one. Install Rust (https://rustup.rs), then run npm install again.',
    )
    process.exit(1)
  }
  const args = ['--yes', '-p', '@napi-rs/cli@3', 'napi', 'build', '--platform', '--release', '--no-js']
  // The committed index.js and index.d.ts stay as they are; napi insists on writing a
  // type file, so it goes into the build directory.
  args.push('--dts', path.join('target', 'install', 'index.d.ts'))
  // The `stores` feature (clients of etcd, Redis, ZooKeeper, PostgreSQL and MySQL) can be
  // left out: the addon then builds in a fraction of the time, directories and SQLite files
  // still work, and a server address is refused with a typed error that says the build
  // leaves that store out. It is left out on request, and when protoc, which the etcd
  // client's build needs, is missing.
  if (process.env.FERROFLAKE_BUILD_STORES === '0') {
    console.log('ferroflake: FERROFLAKE_BUILD_STORES=0: building without the server stores')
    args.push('--no-default-features')
  } else if (!process.env.PROTOC && !found('protoc')) {
    console.warn(
      'ferroflake: protoc is not on PATH, so the addon is built without the server stores ' +
        '(etcd, Redis, ZooKeeper, PostgreSQL, MySQL); install protoc and reinstall to have them.',
    )
    args.push('--no-default-features')
  }
  console.log(`ferroflake: building the addon from source: npx ${args.join(' ')}`)
  const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx'
  const result = spawnSync(npx, args, { cwd: here, stdio: 'inherit', shell: process.platform === 'win32' })
  if (result.status !== 0) {
    console.error('ferroflake: building the addon failed (see above)')
    process.exit(result.status || 1)
  }
}

const prebuilt = loadablePrebuilt()
if (prebuilt) {
  console.log(`ferroflake: using the prebuilt addon from ${prebuilt}`)
} else {
  build()
}
