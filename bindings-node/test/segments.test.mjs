// Segment mode: a SQLite store in a temp folder, keys shared by processes without a
// repeated ID, numbers only for keys whose limit keeps them safe, and coded refusals.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { linkSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { addon } from './support.mjs'

const { SegmentAllocator, SegmentKey } = addon
const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))
const execFileAsync = promisify(execFile)

const folder = mkdtempSync(join(tmpdir(), 'ferroflake-node-segments-'))
after(() => rmSync(folder, { recursive: true, force: true }))
let stores = 0
const storePath = () => join(folder, `store-${stores++}.db`)

test('two processes on one key of one SQLite file: 0 duplicates', { timeout: 90_000 }, async () => {
  const store = storePath()
  const allocator = await SegmentAllocator.open({ store })
  await allocator.createKey('orders', { start: 1000, step: 100 }) // small steps: many fetches each
  await allocator.close()
  const count = 20_000
  const run = () =>
    execFileAsync(process.execPath, [fixture('segment-ids.mjs'), JSON.stringify({ store, key: 'orders', count })], { maxBuffer: 64 << 20 })
      .then(({ stdout }) => JSON.parse(stdout))
  const [a, b] = await Promise.all([run(), run()])
  assert.equal(a.length, count)
  assert.equal(b.length, count)
  for (const ids of [a, b]) {
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], 'increasing within a process')
    assert.ok(ids.every((id) => Number.isSafeInteger(id) && id >= 1000))
  }
  const seen = new Set(a)
  assert.equal(b.filter((id) => seen.has(id)).length, 0, 'no ID taken by both processes')
})

test('a key issues numbers, bigints, strings and batches from one sequence; status and close', async () => {
  const path = storePath()
  const allocator = await SegmentAllocator.open({ store: path, prefetchShare: 0.5 })
  assert.equal(allocator.store, `the SQLite file ${path}`)
  await allocator.createKey('users', { step: 10 })
  const key = await allocator.key('users')
  assert.ok(key instanceof SegmentKey)
  assert.equal(key.key, 'users')
  assert.equal(key.limit, 2n ** 53n - 1n)
  assert.equal(key.isJsSafe, true)
  const next = key.nextId // bound: works detached
  const ids = [key.nextId(), next(), Number(key.nextIdBigInt()), Number(key.nextIdString()), ...key.nextIds(12),
    ...Array.from(key.nextIdsBigInt(3), Number), key.tryNextId() ?? key.nextId()]
  assert.deepEqual(ids.slice(0, 4), [1, 2, 3, 4])
  for (let i = 1; i < ids.length; i++) assert.equal(ids[i], ids[i - 1] + 1, `consecutive at ${i}`)
  const status = key.status()
  assert.equal(status.key, 'users')
  assert.ok(status.fetches >= 2, 'crossed segments of 10')
  assert.deepEqual(allocator.status().map((s) => s.key), ['users'])
  assert.deepEqual(key.nextIds(0), [])
  // Its close talks to the store, so it is awaited: `await using`, not `using`.
  if (Symbol.asyncDispose) assert.equal(allocator[Symbol.asyncDispose], allocator.close)
  assert.equal(allocator[Symbol.dispose], undefined)
  const closing = allocator.close()
  assert.ok(closing instanceof Promise)
  assert.equal(allocator.isClosed, true) // at once: nothing is issued from here on
  const report = await closing
  assert.ok(report.givenBack >= 0)
  assert.throws(() => key.nextId(), (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_CLOSED' && e.constructor === Error)
  assert.throws(() => next(), (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_CLOSED')
  // Opening a key, even one open before, and creating one are refused, as in every face.
  assert.throws(() => allocator.key('users'), (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_CLOSED' && e.constructor === Error)
  assert.throws(() => allocator.createKey('late', { step: 10 }), (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_CLOSED')
})

test('createKey without start or step takes the segment crate\'s defaults, as in every face', async () => {
  const allocator = await SegmentAllocator.open({ store: storePath() })
  await allocator.createKey('plain')
  const key = await allocator.key('plain')
  assert.equal(key.nextId(), 1)
  assert.equal(key.status().step, 1000)
  await allocator.close()
})

test('a key with a limit past 2^53 - 1 gives bigints and strings, and refuses numbers up front', async () => {
  const allocator = await SegmentAllocator.open({ store: storePath() })
  await allocator.createKey('wide', { start: 2n ** 53n - 2n, step: 5 })
  const key = await allocator.key('wide', { limit: 2n ** 63n - 1n })
  assert.equal(key.isJsSafe, false)
  for (const call of [() => key.nextId(), () => key.nextIds(1), () => key.tryNextId()]) {
    assert.throws(call, (e) => e.code === 'ERR_FERROFLAKE_UNSAFE_INTEGER' && e instanceof RangeError)
  }
  const a = key.nextIdBigInt()
  const b = BigInt(key.nextIdString())
  const c = key.nextIdBigInt()
  assert.deepEqual([a, b, c], [2n ** 53n - 2n, 2n ** 53n - 1n, 2n ** 53n])
  // The same key opened with the default (JS-safe) limit stops before 2^53.
  const js = await SegmentAllocator.open({ store: storePath() })
  await js.createKey('edge', { start: 2n ** 53n - 3n, step: 2 })
  const edge = await js.key('edge')
  assert.deepEqual([edge.nextId(), edge.nextId()], [2 ** 53 - 3, 2 ** 53 - 2])
  edge.nextId()
  assert.throws(() => edge.nextId(), (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_EXHAUSTED')
  await allocator.close()
  await js.close()
})

test('bad input to every segment function is a coded error; unreachable stores reject within seconds', { timeout: 60_000 }, async () => {
  const codes = new Set(addon.errorCodes().map((row) => row.code))
  const allocator = await SegmentAllocator.open({ store: storePath() })
  await allocator.createKey('k', { step: 10 })
  const key = await allocator.key('k')
  const expect = (what, errorClass, name) => (e) => {
    assert.equal(e.code, `ERR_FERROFLAKE_${name}`, `${what}: ${e.code} ${e.message}`)
    assert.equal(e.constructor, errorClass, `${what}: ${e.constructor.name}`)
    assert.ok(codes.has(e.code), `${what}: listed`)
    return true
  }
  const thrown = [
    ['open(5)', () => SegmentAllocator.open(5), TypeError, 'INVALID_TYPE'],
    ['open store 5', () => SegmentAllocator.open({ store: 5 }), TypeError, 'INVALID_TYPE'],
    ['open unknown option', () => SegmentAllocator.open({ stor: '/x' }), TypeError, 'UNKNOWN_OPTION'],
    ['open store ftp://', () => SegmentAllocator.open({ store: 'ftp://host/x' }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['open store relative', () => SegmentAllocator.open({ store: 'segments.db' }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['open store ?mode=ro', () => SegmentAllocator.open({ store: 'sqlite:///tmp/s.db?mode=ro' }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['open prefetchShare 2', () => SegmentAllocator.open({ prefetchShare: 2 }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['open prefetchShare "0.5"', () => SegmentAllocator.open({ prefetchShare: '0.5' }), TypeError, 'INVALID_TYPE'],
    ['open maxStep 0', () => SegmentAllocator.open({ maxStep: 0 }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['open maxWaitMs -1', () => SegmentAllocator.open({ maxWaitMs: -1 }), RangeError, 'OUT_OF_RANGE'],
    ['new SegmentAllocator()', () => new SegmentAllocator(), TypeError, 'INVALID_TYPE'],
    ['new SegmentKey()', () => new SegmentKey(), TypeError, 'INVALID_TYPE'],
    ['createKey(5)', () => allocator.createKey(5, { step: 1 }), TypeError, 'INVALID_TYPE'],
    ['createKey options 5', () => allocator.createKey('x', 5), TypeError, 'INVALID_TYPE'],
    ['createKey step "5"', () => allocator.createKey('x', { step: '5' }), TypeError, 'INVALID_TYPE'],
    ['createKey step 0', () => allocator.createKey('x', { step: 0 }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['createKey step 2^31', () => allocator.createKey('x', { step: 2 ** 31 }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['createKey start -1', () => allocator.createKey('x', { step: 1, start: -1 }), RangeError, 'OUT_OF_RANGE'],
    ['createKey start 2^63', () => allocator.createKey('x', { step: 1, start: 2n ** 63n }), RangeError, 'OUT_OF_RANGE'],
    ['createKey empty key', () => allocator.createKey('', { step: 1 }), RangeError, 'SEGMENT_INVALID_KEY'],
    ['createKey 200-byte key', () => allocator.createKey('k'.repeat(200), { step: 1 }), RangeError, 'SEGMENT_INVALID_KEY'],
    ['key(null)', () => allocator.key(null), TypeError, 'INVALID_TYPE'],
    ['key empty', () => allocator.key(''), RangeError, 'SEGMENT_INVALID_KEY'],
    ['key limit 1.5', () => allocator.key('k', { limit: 1.5 }), RangeError, 'NOT_AN_INTEGER'],
    ['key limit 2^64n', () => allocator.key('k', { limit: 2n ** 64n }), RangeError, 'OUT_OF_RANGE'],
    ['key limit 2^63n', () => allocator.key('k', { limit: 2n ** 63n }), RangeError, 'SEGMENT_INVALID_CONFIG'],
    ['nextIds(-1)', () => key.nextIds(-1), RangeError, 'OUT_OF_RANGE'],
    ['nextIds(2^25)', () => key.nextIds(2 ** 25), RangeError, 'OUT_OF_RANGE'],
    ['nextIds("2")', () => key.nextIds('2'), TypeError, 'INVALID_TYPE'],
    ['nextIdString("hex")', () => key.nextIdString('hex'), RangeError, 'INVALID_OPTION'],
  ]
  for (const [what, call, errorClass, name] of thrown) assert.throws(call, expect(what, errorClass, name), what)
  const rejected = [
    // The table's state, not the caller's input: as in every face.
    ['createKey existing', () => allocator.createKey('k', { step: 10 }), Error, 'SEGMENT_KEY_EXISTS'],
    ['key unknown', () => allocator.key('missing'), Error, 'SEGMENT_UNKNOWN_KEY'],
    ['key with another limit', () => allocator.key('k', { limit: 1000 }), RangeError, 'SEGMENT_INVALID_CONFIG'],
  ]
  for (const [what, call, errorClass, name] of rejected) await assert.rejects(call(), expect(what, errorClass, name), what)
  for (const store of ['redis://127.0.0.1:1', 'postgres://nobody@127.0.0.1:1/none', 'mysql://nobody@127.0.0.1:1/none']) {
    const started = Date.now()
    await assert.rejects(SegmentAllocator.open({ store }), expect(store, Error, 'SEGMENT_UNAVAILABLE'), store)
    assert.ok(Date.now() - started < 15_000, `${store}: refused in ${Date.now() - started} ms`)
  }
  await allocator.close()
})

test('a SQLite file deleted whole is caught by this host\'s record: the key made again is REWOUND', async () => {
  // Made again at 1, the key would repeat every ID the lost file issued.
  const path = storePath()
  const allocator = await SegmentAllocator.open({ store: path })
  await allocator.createKey('lost', { start: 1, step: 10 })
  assert.deepEqual((await allocator.key('lost')).nextIds(15), Array.from({ length: 15 }, (_, i) => i + 1))
  await allocator.close()
  for (const side of ['', '-wal', '-shm']) rmSync(path + side, { force: true })
  const again = await SegmentAllocator.open({ store: path })
  await assert.rejects(again.createKey('lost', { start: 1, step: 10 }),
    (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_REWOUND' && /lost/.test(e.message))
  await again.close()
})

test('a hard link to an open SQLite file is refused; a symbolic link is the same name', async () => {
  // SQLite keeps its write-ahead log beside each name: two names open at once would issue
  // the same IDs.
  const first = storePath()
  const [link, symlink] = [`${first}.alias`, `${first}.link`]
  const allocator = await SegmentAllocator.open({ store: first })
  await allocator.createKey('p', { start: 1, step: 10 })
  linkSync(first, link)
  symlinkSync(first, symlink)
  await assert.rejects(async () => SegmentAllocator.open({ store: link }),
    (e) => e.code === 'ERR_FERROFLAKE_SEGMENT_UNAVAILABLE' && /under another name/.test(e.message))
  const taken = (await allocator.key('p')).nextIds(3)
  const same = await SegmentAllocator.open({ store: symlink })
  taken.push(...(await same.key('p')).nextIds(3))
  await same.close()
  await allocator.close()
  assert.equal(new Set(taken).size, 6, String(taken))
})

test('a relative store path is refused with the file it would name', () => {
  assert.throws(() => SegmentAllocator.open({ store: 'segments.db' }), (e) => {
    assert.equal(e.code, 'ERR_FERROFLAKE_SEGMENT_INVALID_CONFIG')
    assert.match(e.message, /different file in each working directory/)
    assert.ok(e.message.includes(join(process.cwd(), 'segments.db')), e.message)
    return true
  })
})
