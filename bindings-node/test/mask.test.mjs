// MaskKeyring: every mask case of vectors.json, seeded round trips at 53 and 63 bits,
// rotation, refusals with their codes, keys from a file and the environment, and no
// secret in anything a keyring shows.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { once } from 'node:events'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { addon, vectors, assertThrowsCode, FORMATS } from './support.mjs'

const { MaskKeyring, errorCodes } = addon
const code = (name) => `ERR_FERROFLAKE_${name}`
const classOf = new Map(errorCodes().map((row) => [row.code, globalThis[row.className]]))
/** Asserts that `fn` throws the code `name` with the class the error table gives it. */
const assertRefused = (fn, name) => assertThrowsCode(fn, classOf.get(code(name)), code(name))

const KEY = '1:000102030405060708090a0b0c0d0e0f'
const OTHER_SECRET = '1:f0e1d2c3b4a5968778695a4b3c2d1e0f'
const SAFE = BigInt(Number.MAX_SAFE_INTEGER)

/** The width's JS type: numbers up to 53 bits, bigints above. */
const typed = (bits, value) => (bits <= 53 ? Number(value) : BigInt(value))

/** A seeded 64-bit generator (splitmix64), so a failing case can be replayed. */
function splitmix(seed) {
  let state = BigInt.asUintN(64, BigInt(seed))
  return () => {
    state = BigInt.asUintN(64, state + 0x9e3779b97f4a7c15n)
    let z = state
    z = BigInt.asUintN(64, (z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n)
    z = BigInt.asUintN(64, (z ^ (z >> 27n)) * 0x94d049bb133111ebn)
    return z ^ (z >> 31n)
  }
}

test('every mask case of vectors.json: mask, unmask, encode and decode', () => {
  const { cases } = vectors.mask
  assert.ok(cases.length > 10)
  const widths = new Set()
  for (const c of cases) {
    widths.add(c.bits)
    const ring = new MaskKeyring(c.key)
    const label = `${c.key.split(':')[0]} ${c.bits} bits id ${c.id}`
    const masked = typed(c.bits, c.masked)
    const id = typed(c.bits, c.id)
    // The ID as given in every form the API takes: the width's type, a bigint, a string.
    for (const form of new Set([id, BigInt(c.id), c.id])) {
      assert.equal(ring.mask(form, { bits: c.bits }), masked, `${label} (${typeof form})`)
    }
    assert.equal(ring.unmask(masked, { bits: c.bits }), id, label)
    assert.equal(ring.unmask(c.masked, { bits: c.bits, version: ring.currentVersion }), id, label)
    for (const format of FORMATS) {
      assert.equal(ring.encode(c.id, { format, bits: c.bits }), c.text[format], `${label} ${format}`)
      assert.equal(ring.decode(c.text[format], { format, bits: c.bits }), id, `${label} ${format}`)
    }
    if (c.bits === 53) {
      assert.equal(ring.mask(id), masked, `${label}: 53 bits is the default`)
      assert.equal(ring.encode(id), c.text.base62, `${label}: base62 is the default format`)
    }
  }
  assert.ok(widths.has(53) && widths.has(63), `vectors cover 53 and 63 bits: ${[...widths]}`)
})

const folder = mkdtempSync(join(tmpdir(), 'ferroflake-node-mask-'))
after(() => rmSync(folder, { recursive: true, force: true }))

test('every maker binds mask, unmask, encode and decode to its keys, equal to the prototype methods', () => {
  const path = join(folder, 'bound.key')
  writeFileSync(path, `${KEY}\n`, { mode: 0o600 })
  process.env.FERROFLAKE_NODE_BOUND_KEY = KEY
  const rings = {
    constructor: new MaskKeyring(KEY),
    parse: MaskKeyring.parse(KEY),
    fromFile: MaskKeyring.fromFile(path),
    fromEnv: MaskKeyring.fromEnv('FERROFLAKE_NODE_BOUND_KEY'),
  }
  delete process.env.FERROFLAKE_NODE_BOUND_KEY
  const other = new MaskKeyring(OTHER_SECRET)
  const { prototype } = MaskKeyring
  for (const [maker, ring] of Object.entries(rings)) {
    assert.ok(ring instanceof MaskKeyring, maker)
    for (const name of ['mask', 'unmask', 'encode', 'decode']) {
      assert.ok(Object.hasOwn(ring, name), `${maker}: ${name} is bound to the keyring`)
      assert.notEqual(ring[name], prototype[name], `${maker}: ${name} shadows the prototype's`)
      assert.notEqual(ring[name], other[name], `${maker}: ${name} is this keyring's own`)
    }
    // Detached, so nothing reaches them through `this`.
    const { mask, unmask, encode, decode } = ring
    for (const id of [0, 1, 4095, Number.MAX_SAFE_INTEGER]) {
      const masked = prototype.mask.call(ring, id)
      assert.notEqual(masked, other.mask(id), `${maker}: another key masks ${id} otherwise`)
      assert.equal(mask(id), masked, `${maker}: mask(${id})`)
      assert.equal(unmask(masked), id, `${maker}: unmask`)
      assert.equal(mask(BigInt(id), { bits: 63 }), prototype.mask.call(ring, id, { bits: 63 }), `${maker}: 63 bits`)
      assert.equal(unmask(String(masked), { version: 1 }), id, `${maker}: unmask a string of version 1`)
      const text = encode(id, { format: 'base32' })
      assert.equal(text, prototype.encode.call(ring, id, { format: 'base32' }), `${maker}: encode`)
      assert.equal(decode(text, { format: 'base32' }), id, `${maker}: decode`)
    }
    // Refusals keep their codes through the bound functions.
    assertRefused(() => mask(2 ** 53), 'UNSAFE_INTEGER')
    assertRefused(() => mask(), 'INVALID_TYPE')
    assertRefused(() => unmask(1, { version: 2 }), 'UNKNOWN_MASK_KEY_VERSION')
    assertRefused(() => encode(1, { bits: 7 }), 'MASK_WIDTH_OUT_OF_RANGE')
    assertRefused(() => decode(), 'INVALID_TYPE')
    for (const bound of [mask, unmask, encode, decode]) assertRefused(() => new bound(42), 'INVALID_TYPE')
  }
})

test('every spelling of a key masks as its canonical form', () => {
  const canonical = new MaskKeyring(KEY)
  for (const spelling of vectors.mask.key_spellings) {
    const ring = new MaskKeyring(spelling)
    assert.deepEqual(ring.versions, canonical.versions, spelling)
    for (const id of [0, 1, 12345, Number.MAX_SAFE_INTEGER]) assert.equal(ring.mask(id), canonical.mask(id), spelling)
  }
})

test('bad key text is refused with its kind, without the text in the message', () => {
  assert.ok(vectors.mask.key_errors.length > 0)
  for (const c of vectors.mask.key_errors) {
    for (const make of [(t) => new MaskKeyring(t), (t) => MaskKeyring.parse(t)]) {
      const error = assertRefused(() => make(c.input), c.error)
      const secret = c.input.split(':')[1]?.slice(0, 12)
      if (secret) assert.ok(!error.message.includes(secret), `${c.error}: ${error.message}`)
    }
  }
})

test('every decode error of vectors.json is refused with its kind', () => {
  assert.ok(vectors.mask.decode_errors.length > 0)
  for (const c of vectors.mask.decode_errors) {
    const ring = new MaskKeyring(c.keyring.join('\n'))
    assertRefused(() => ring.decode(c.input, { format: c.format, bits: c.bits }), c.error)
  }
})

test('seeded round trips: 53 bits as numbers, 63 and 64 bits as bigints', () => {
  const ring = new MaskKeyring(KEY)
  const next = splitmix(0x5eed)
  for (const bits of [53, 63, 64, 32]) {
    const seen = new Set()
    for (let i = 0; i < 3000; i++) {
      const raw = BigInt.asUintN(bits, next())
      const id = typed(bits, raw)
      const masked = ring.mask(id, { bits })
      assert.equal(typeof masked, bits <= 53 ? 'number' : 'bigint', `${bits} bits`)
      if (bits <= 53) assert.ok(Number.isSafeInteger(masked) && masked >= 0, `${bits} bits: ${masked}`)
      assert.ok(BigInt(masked) < 2n ** BigInt(bits), `${bits} bits: ${masked} fits the width`)
      assert.equal(ring.unmask(masked, { bits }), id, `${bits} bits: id ${raw}`)
      for (const format of FORMATS) {
        assert.equal(ring.decode(ring.encode(id, { format, bits }), { format, bits }), id, `${bits} bits ${format}: id ${raw}`)
      }
      seen.add(masked)
    }
    assert.equal(seen.size, 3000, `${bits} bits: distinct IDs give distinct masks`)
  }
  // Neighbours are unrelated.
  assert.notEqual(ring.mask(1_000_002), ring.mask(1_000_001) + 1)
})

test('the wrong key or the wrong version does not round trip', () => {
  const ring = new MaskKeyring(KEY)
  const impostor = new MaskKeyring(OTHER_SECRET) // same version, another secret
  const next = splitmix(7)
  for (let i = 0; i < 200; i++) {
    const id = Number(BigInt.asUintN(53, next()))
    assert.notEqual(impostor.unmask(ring.mask(id)), id, `id ${id}`)
    // Its text names version 1, which the impostor holds, so it decodes, but wrongly.
    assert.notEqual(impostor.decode(ring.encode(id)), id, `id ${id}`)
  }
  // Rotation: 2 masks, 1 still unmasks what it masked; the text's version picks the key.
  const rotated = new MaskKeyring(`2:${OTHER_SECRET.split(':')[1]}\n${KEY}\n`)
  assert.equal(rotated.currentVersion, 2)
  assert.deepEqual(rotated.versions, [1, 2])
  const old = ring.encode(42, { format: 'base32', bits: 63 })
  const fresh = rotated.encode(42, { format: 'base32', bits: 63 })
  assert.ok(old.startsWith('1') && fresh.startsWith('2'), `${old} ${fresh}`)
  assert.equal(rotated.decode(old, { format: 'base32', bits: 63 }), 42n)
  assert.equal(rotated.decode(fresh, { format: 'base32', bits: 63 }), 42n)
  assert.equal(rotated.unmask(ring.mask(42), { version: 1 }), 42)
  assert.notEqual(rotated.unmask(ring.mask(42)), 42, 'the bare number unmasks with the current key')
  assertRefused(() => ring.decode(fresh, { format: 'base32', bits: 63 }), 'UNKNOWN_MASK_KEY_VERSION')
  assertRefused(() => ring.unmask(5, { version: 2 }), 'UNKNOWN_MASK_KEY_VERSION')
})

test('unsafe numbers and bad options are refused, never rounded', () => {
  const ring = new MaskKeyring(KEY)
  const refused = [
    [() => ring.mask(2 ** 53), 'UNSAFE_INTEGER'],
    [() => ring.mask(2 ** 60, { bits: 63 }), 'UNSAFE_INTEGER'],
    [() => ring.unmask(2 ** 53 + 2, { bits: 64 }), 'UNSAFE_INTEGER'],
    [() => ring.encode(9007199254740993), 'UNSAFE_INTEGER'],
    [() => ring.mask(1.5), 'NOT_AN_INTEGER'],
    [() => ring.mask(NaN), 'NOT_AN_INTEGER'],
    [() => ring.mask(-1), 'OUT_OF_RANGE'],
    [() => ring.mask(2n ** 64n, { bits: 64 }), 'OUT_OF_RANGE'],
    [() => ring.mask(SAFE + 1n), 'ID_OUT_OF_RANGE'],
    [() => ring.unmask(2n ** 63n, { bits: 63 }), 'ID_OUT_OF_RANGE'],
    [() => ring.mask('12x'), 'PARSE_INVALID_CHARACTER'],
    [() => ring.mask(true), 'INVALID_TYPE'],
    [() => ring.mask(), 'INVALID_TYPE'],
    [() => ring.mask(1, 53), 'INVALID_TYPE'],
    [() => ring.mask(1, { bits: '53' }), 'INVALID_TYPE'],
    [() => ring.mask(1, { bit: 53 }), 'UNKNOWN_OPTION'],
    [() => ring.mask(1, { bits: 65 }), 'MASK_WIDTH_OUT_OF_RANGE'],
    [() => ring.mask(1, { bits: 7 }), 'MASK_WIDTH_OUT_OF_RANGE'],
    [() => ring.mask(1, { bits: 2 ** 40 }), 'OUT_OF_RANGE'],
    [() => ring.unmask(1, { version: 256 }), 'OUT_OF_RANGE'],
    [() => ring.unmask(1, { version: 40 }), 'UNKNOWN_MASK_KEY_VERSION'],
    [() => ring.encode(1, { format: 'hex' }), 'INVALID_OPTION'],
    [() => ring.encode(1, { format: 'base62', version: 1 }), 'UNKNOWN_OPTION'],
    [() => ring.decode(42), 'INVALID_TYPE'],
    [() => new MaskKeyring(), 'INVALID_TYPE'],
    [() => new MaskKeyring(Buffer.from(KEY)), 'INVALID_TYPE'],
  ]
  for (const [call, name] of refused) assertRefused(call, name)
  // At the edge: the largest 53-bit ID is a number in and out.
  const top = ring.mask(Number.MAX_SAFE_INTEGER)
  assert.equal(ring.unmask(top), Number.MAX_SAFE_INTEGER)
  assert.equal(ring.unmask(ring.mask(2n ** 64n - 1n, { bits: 64 }), { bits: 64 }), 2n ** 64n - 1n)
})

test('no secret in inspect, toString, JSON or the own properties', () => {
  const hex = 'f0e1d2c3b4a5968778695a4b3c2d1e0f'
  const ring = new MaskKeyring(`# comment\n3:${hex}\n${KEY}`)
  const shown = [inspect(ring, { showHidden: true, depth: 5 }), String(ring), `${ring}`, JSON.stringify(ring), JSON.stringify(Object.entries(ring))]
  for (const text of shown) {
    for (const secret of [hex, '000102030405060708090a0b0c0d0e0f', 'AAECAwQFBgcICQoLDA0ODw']) {
      assert.ok(!text.toLowerCase().includes(secret.toLowerCase()), `secret shown in ${text}`)
    }
  }
  assert.equal(String(ring), 'MaskKeyring { currentVersion: 3, versions: [1, 3] }')
  assert.deepEqual(JSON.parse(JSON.stringify(ring)), { currentVersion: 3, versions: [1, 3] })
})

test('MaskKeyring.fromFile reads a key file; a missing or bad one is a clear error', () => {
  const path = join(folder, 'mask.key')
  writeFileSync(path, `# current\n2:${OTHER_SECRET.split(':')[1]}\r\n\n# before the rotation\n  ${KEY}  \n`, { mode: 0o600 })
  const ring = MaskKeyring.fromFile(path)
  assert.equal(ring.currentVersion, 2)
  assert.deepEqual(ring.versions, [1, 2])
  assert.equal(ring.decode(new MaskKeyring(KEY).encode(77)), 77)
  const missing = assertRefused(() => MaskKeyring.fromFile(join(folder, 'absent.key')), 'MASK_KEY_MISSING')
  assert.equal(missing.constructor, Error)
  assert.match(missing.message, /absent\.key/)
  const bad = join(folder, 'bad.key')
  writeFileSync(bad, `${KEY}\n# second line\n2:not-a-secret-${'z'.repeat(19)}\n`, { mode: 0o600 })
  const error = assertRefused(() => MaskKeyring.fromFile(bad), 'PARSE_INVALID_CHARACTER')
  assert.match(error.message, /bad\.key.*line 3/)
  assert.ok(!error.message.includes('not-a-secret'), error.message)
  assertRefused(() => MaskKeyring.fromFile(join(folder)), 'MASK_KEY_MISSING') // a directory
  assertRefused(() => MaskKeyring.fromFile(5), 'INVALID_TYPE')
})

test('MaskKeyring.fromFile warns of a key file others can read, and refuses what is not a key file at once', async () => {
  const readable = join(folder, 'readable.key')
  writeFileSync(readable, `${KEY}\n`)
  chmodSync(readable, 0o644)
  const warned = once(process, 'warning')
  assert.deepEqual(MaskKeyring.fromFile(readable).versions, [1])
  const [warning] = await warned
  assert.equal(warning.code, 'FERROFLAKE_KEY_FILE_READABLE')
  assert.match(warning.message, /readable\.key can be read by other users \(mode 644\); `chmod 600` it/)
  // A FIFO would block the event loop for ever, /dev/zero fill memory: both refused at once.
  const fifo = join(folder, 'fifo')
  execFileSync('mkfifo', [fifo])
  const huge = join(folder, 'huge.key')
  writeFileSync(huge, '#'.repeat(70_000), { mode: 0o600 })
  for (const [path, said] of [[fifo, /not a regular file/], ['/dev/zero', /not a regular file/], [huge, /larger than 65536 bytes/]]) {
    const error = assertRefused(() => MaskKeyring.fromFile(path), 'MASK_KEY_MISSING')
    assert.match(error.message, said)
  }
})

test('MaskKeyring.fromEnv reads FERROFLAKE_MASK_KEY or a named variable; unset is a clear error', () => {
  const saved = process.env.FERROFLAKE_MASK_KEY
  try {
    delete process.env.FERROFLAKE_MASK_KEY
    const error = assertRefused(() => MaskKeyring.fromEnv(), 'MASK_KEY_MISSING')
    assert.match(error.message, /FERROFLAKE_MASK_KEY/)
    process.env.FERROFLAKE_MASK_KEY = KEY
    assert.equal(MaskKeyring.fromEnv().mask(9), new MaskKeyring(KEY).mask(9))
    process.env.FERROFLAKE_TEST_OTHER_MASK_KEY = OTHER_SECRET
    assert.equal(MaskKeyring.fromEnv('FERROFLAKE_TEST_OTHER_MASK_KEY').mask(9), new MaskKeyring(OTHER_SECRET).mask(9))
    process.env.FERROFLAKE_TEST_OTHER_MASK_KEY = ''
    const empty = assertRefused(() => MaskKeyring.fromEnv('FERROFLAKE_TEST_OTHER_MASK_KEY'), 'PARSE_EMPTY')
    assert.match(empty.message, /FERROFLAKE_TEST_OTHER_MASK_KEY/)
    assertRefused(() => MaskKeyring.fromEnv('FERROFLAKE_TEST_NOT_SET_ANYWHERE'), 'MASK_KEY_MISSING')
    assertRefused(() => MaskKeyring.fromEnv(1), 'INVALID_TYPE')
  } finally {
    if (saved === undefined) delete process.env.FERROFLAKE_MASK_KEY
    else process.env.FERROFLAKE_MASK_KEY = saved
    delete process.env.FERROFLAKE_TEST_OTHER_MASK_KEY
  }
})
