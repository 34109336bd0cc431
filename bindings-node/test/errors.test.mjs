// The error table: every refusal has a class and a stable code, and no input, however
// odd, crashes the process or slips through as a rounded number.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addon, vectors, assertThrowsCode, FERROFLAKE_EPOCH_MS } from './support.mjs'

const { Layout, Generator, ManualClock, decode, encode, parse, errorCodes } = addon
const now = () => new ManualClock(FERROFLAKE_EPOCH_MS + 86_400_000)
// One node id per layout and one clock for all: a process has one core generator per node
// id, and these Generators, identical per layout, share it.
const sharedClock = now()
const NODE_FOR_LAYOUT = { twitter: 100, sharded: 50 }
const manual = (options = {}) =>
  new Generator({ nodeId: NODE_FOR_LAYOUT[options.layout] ?? 1, clock: sharedClock, ...options })

// [what, call, class, code]
const table = [
  ['nodeId NaN', () => manual({ nodeId: NaN }), RangeError, 'NOT_AN_INTEGER'],
  ['nodeId Infinity', () => manual({ nodeId: Infinity }), RangeError, 'NOT_AN_INTEGER'],
  ['nodeId -Infinity', () => manual({ nodeId: -Infinity }), RangeError, 'NOT_AN_INTEGER'],
  ['nodeId 1.5', () => manual({ nodeId: 1.5 }), RangeError, 'NOT_AN_INTEGER'],
  ['nodeId 2^53', () => manual({ nodeId: 2 ** 53 }), RangeError, 'UNSAFE_INTEGER'],
  ['nodeId 2^64 as a number', () => manual({ nodeId: 2 ** 64 }), RangeError, 'UNSAFE_INTEGER'],
  ['nodeId -1', () => manual({ nodeId: -1 }), RangeError, 'OUT_OF_RANGE'],
  ['nodeId -1n', () => manual({ nodeId: -1n }), RangeError, 'OUT_OF_RANGE'],
  ['nodeId 2^64n', () => manual({ nodeId: 2n ** 64n }), RangeError, 'OUT_OF_RANGE'],
  ['nodeId 16 on js53ms', () => manual({ nodeId: 16 }), RangeError, 'NODE_OUT_OF_RANGE'],
  ['nodeId 2^63n on js53ms', () => manual({ nodeId: 2n ** 63n }), RangeError, 'NODE_OUT_OF_RANGE'],
  ['nodeId "1"', () => manual({ nodeId: '1' }), TypeError, 'INVALID_TYPE'],
  ['nodeId true', () => manual({ nodeId: true }), TypeError, 'INVALID_TYPE'],
  ['nodeId missing', () => new Generator({}), TypeError, 'INVALID_TYPE'],
  ['no options', () => new Generator(), TypeError, 'INVALID_TYPE'],
  ['options a number', () => new Generator(3), TypeError, 'INVALID_TYPE'],
  ['options key typo', () => manual({ nodeid: 1 }), TypeError, 'UNKNOWN_OPTION'],
  ['layout unknown name', () => manual({ layout: 'snowflake' }), RangeError, 'UNKNOWN_LAYOUT'],
  ['layout a plain object', () => manual({ layout: { timeBits: 41 } }), TypeError, 'INVALID_TYPE'],
  ['layout a ManualClock', () => manual({ layout: now() }), TypeError, 'INVALID_TYPE'],
  ['clock unknown name', () => manual({ clock: 'atomic' }), RangeError, 'INVALID_OPTION'],
  ['clock a Layout', () => manual({ clock: Layout.preset('js53') }), TypeError, 'INVALID_TYPE'],
  ['clock a number', () => manual({ clock: 5 }), TypeError, 'INVALID_TYPE'],
  ['maxDriftTicks -1', () => manual({ maxDriftTicks: -1 }), RangeError, 'OUT_OF_RANGE'],
  ['resumeAfterMs NaN', () => manual({ resumeAfterMs: NaN }), RangeError, 'NOT_AN_INTEGER'],
  ['resumeAfterMs a minute ahead', () => manual({ nodeId: 3, clock: now(), resumeAfterMs: FERROFLAKE_EPOCH_MS + 86_460_000 }), RangeError, 'RESUME_IN_FUTURE'],
  ['resumeAfterMs past the layout', () => manual({ nodeId: 3, clock: now(), resumeAfterMs: 2n ** 64n - 1n }), RangeError, 'LAYOUT_EXHAUSTED'],
  ['epoch in the future', () => new Generator({ nodeId: 1, clock: new ManualClock(FERROFLAKE_EPOCH_MS - 1) }), RangeError, 'EPOCH_IN_FUTURE'],
  ['nextId on a 63-bit layout', () => manual({ layout: 'twitter' }).nextId(), RangeError, 'UNSAFE_INTEGER'],
  ['nextIds on a 63-bit layout', () => manual({ layout: 'twitter' }).nextIds(2), RangeError, 'UNSAFE_INTEGER'],
  ['nextIds(1.5)', () => manual().nextIds(1.5), RangeError, 'NOT_AN_INTEGER'],
  ['nextIds(-1)', () => manual().nextIds(-1), RangeError, 'OUT_OF_RANGE'],
  ['nextIds(2^30)', () => manual().nextIds(2 ** 30), RangeError, 'OUT_OF_RANGE'],
  ['nextIds("3")', () => manual().nextIds('3'), TypeError, 'INVALID_TYPE'],
  ['nextIdString bad format', () => manual().nextIdString('hex'), RangeError, 'INVALID_OPTION'],
  ['nextIdString format 62', () => manual().nextIdString(62), TypeError, 'INVALID_TYPE'],
  ['nextIdForShard 1 without shard bits', () => manual().nextIdForShard(1), RangeError, 'SHARD_OUT_OF_RANGE'],
  ['nextIdForShard 16 on sharded', () => manual({ layout: 'sharded' }).nextIdForShard(16), RangeError, 'SHARD_OUT_OF_RANGE'],
  ['decode a number above 2^53', () => decode(2 ** 60), RangeError, 'UNSAFE_INTEGER'],
  ['decode NaN', () => decode(NaN), RangeError, 'NOT_AN_INTEGER'],
  ['decode 1.5', () => decode(1.5), RangeError, 'NOT_AN_INTEGER'],
  ['decode -1', () => decode(-1), RangeError, 'OUT_OF_RANGE'],
  ['decode -1n', () => decode(-1n), RangeError, 'OUT_OF_RANGE'],
  ['decode 2^64n', () => decode(2n ** 64n), RangeError, 'OUT_OF_RANGE'],
  ['decode 2^63n (twitter)', () => decode(2n ** 63n, 'twitter'), RangeError, 'ID_OUT_OF_RANGE'],
  ['decode a 63-bit id with js53ms', () => decode(2n ** 60n), RangeError, 'ID_OUT_OF_RANGE'],
  ['decode "abc"', () => decode('abc'), RangeError, 'PARSE_INVALID_CHARACTER'],
  ['decode ""', () => decode(''), RangeError, 'PARSE_EMPTY'],
  ['decode "-5"', () => decode('-5'), RangeError, 'PARSE_NEGATIVE'],
  ['decode an object', () => decode({}), TypeError, 'INVALID_TYPE'],
  ['decode undefined', () => decode(), TypeError, 'INVALID_TYPE'],
  ['decode with a bad layout', () => decode(1, 42), TypeError, 'INVALID_TYPE'],
  ['encode a number above 2^53', () => encode(2 ** 53 + 2), RangeError, 'UNSAFE_INTEGER'],
  ['encode 2^63n (parse refuses it too)', () => encode(2n ** 63n), RangeError, 'PARSE_OVERFLOW'],
  ['encode 2^64n - 1n as base62', () => encode(2n ** 64n - 1n, 'base62'), RangeError, 'PARSE_OVERFLOW'],
  ['encode bad format', () => encode(1, 'base64'), RangeError, 'INVALID_OPTION'],
  ['parse a number', () => parse(42), TypeError, 'INVALID_TYPE'],
  ['parse overflow', () => parse('9223372036854775808'), RangeError, 'PARSE_OVERFLOW'],
  ['Layout.preset(1)', () => Layout.preset(1), TypeError, 'INVALID_TYPE'],
  ['Layout.preset("x")', () => Layout.preset('x'), RangeError, 'UNKNOWN_LAYOUT'],
  ['Layout.custom(null)', () => Layout.custom(null), TypeError, 'INVALID_TYPE'],
  ['Layout.custom missing widths', () => Layout.custom({ timeBits: 41 }), TypeError, 'INVALID_TYPE'],
  ['Layout.custom 300 bits', () => Layout.custom({ timeBits: 300, nodeBits: 0, sequenceBits: 1 }), RangeError, 'OUT_OF_RANGE'],
  ['Layout.custom 64 bits', () => Layout.custom({ timeBits: 42, nodeBits: 10, sequenceBits: 12 }), RangeError, 'TOO_MANY_BITS'],
  ['Layout.custom tick 0', () => Layout.custom({ timeBits: 41, nodeBits: 10, sequenceBits: 12, tickMs: 0 }), RangeError, 'ZERO_TICK'],
  ['Layout.custom bad order', () => Layout.custom({ timeBits: 41, nodeBits: 10, sequenceBits: 12, order: 'up' }), RangeError, 'INVALID_OPTION'],
  ['Layout.custom unknown key', () => Layout.custom({ timeBits: 41, nodeBits: 10, sequenceBits: 12, tick: 1 }), TypeError, 'UNKNOWN_OPTION'],
  ['Layout.custom epoch -1', () => Layout.custom({ timeBits: 41, nodeBits: 10, sequenceBits: 12, epochMs: -1 }), RangeError, 'EPOCH_BEFORE_UNIX'],
  ['compose without timestampMs', () => Layout.preset('twitter').compose({ nodeId: 1 }), TypeError, 'INVALID_TYPE'],
  ['compose sequence too large', () => Layout.preset('twitter').compose({ timestampMs: Date.now(), sequence: 4096 }), RangeError, 'SEQUENCE_OUT_OF_RANGE'],
  ['ManualClock(-1)', () => new ManualClock(-1), RangeError, 'OUT_OF_RANGE'],
  ['ManualClock("now")', () => new ManualClock('now'), TypeError, 'INVALID_TYPE'],
  ['advanceMs by 2^64', () => new ManualClock(0).advanceMs(2n ** 64n), RangeError, 'OUT_OF_RANGE'],
  ['setFenceMs(1.5)', () => manual().setFenceMs(1.5), RangeError, 'NOT_AN_INTEGER'],
]

test('every refusal in the table throws its class and code', () => {
  for (const [what, call, errorClass, name] of table) {
    const error = assertThrowsCode(call, errorClass, `ERR_FERROFLAKE_${name}`)
    assert.ok(error.message.length > 10, `${what}: message says why`)
  }
})

test('errorCodes() lists every code with its class, and every vector error is in it', () => {
  const codes = errorCodes()
  const byCode = new Map(codes.map((row) => [row.code, row]))
  assert.equal(byCode.size, codes.length, 'codes are unique')
  for (const row of codes) assert.match(row.code, /^ERR_FERROFLAKE_[A-Z0-9_]+$/)
  const coreNumbers = codes.filter((row) => row.coreCode != null).map((row) => row.coreCode)
  assert.deepEqual(coreNumbers, [...coreNumbers].sort((a, b) => a - b), 'core kinds in code order')
  const vectorErrors = Object.values(vectors)
    .filter(Array.isArray)
    .flat()
    .filter((c) => c && typeof c.error === 'string')
    .map((c) => `ERR_FERROFLAKE_${c.error}`)
  assert.ok(vectorErrors.length > 20)
  for (const code of vectorErrors) assert.ok(byCode.has(code), code)
  for (const [what, , errorClass, name] of table) {
    const row = byCode.get(`ERR_FERROFLAKE_${name}`)
    assert.ok(row, `${what}: ${name} is listed`)
    assert.equal(row.className, errorClass.name, `${what}: class matches the table`)
  }
})

const describe = (value) => {
  try { return typeof value === 'bigint' ? `${value}n` : String(value) } catch { return `(${typeof value} that cannot be printed)` }
}

test('odd values never crash the process: each call returns or throws a coded error', () => {
  const boom = new Error('boom from a proxy')
  const hostile = new Proxy({}, {
    get() { throw boom },
    ownKeys() { throw boom },
  })
  const odd = [undefined, null, NaN, Infinity, -Infinity, -0, -1, 0.5, 2 ** 53, 2 ** 64, 1e308,
    '', ' ', 'x', '1e3', '0x10', Symbol('s'), {}, [], [1], () => 1, true, -1n, 2n ** 64n,
    2n ** 63n, new Date(), hostile, Object.create(null)]
  const generator = manual({ layout: 'sharded' })
  const layout = Layout.preset('js53')
  const clock = now()
  const calls = [
    (v) => new Generator(v),
    (v) => new Generator({ nodeId: v, clock: now() }),
    (v) => new Generator({ nodeId: 0, clock: v }),
    (v) => new Generator({ nodeId: 0, layout: v, clock: now() }),
    (v) => new Generator({ nodeId: 0, clock: now(), maxDriftTicks: v }),
    (v) => generator.nextIds(v),
    (v) => generator.nextIdsBigInt(v),
    (v) => generator.nextIdString(v),
    (v) => generator.nextIdForShard(v),
    (v) => generator.decode(v),
    (v) => generator.setFenceMs(v),
    (v) => decode(v),
    (v) => decode(1, v),
    (v) => encode(v),
    (v) => encode(1, v),
    (v) => parse(v),
    (v) => parse('1', v),
    (v) => Layout.preset(v),
    (v) => Layout.custom(v),
    (v) => Layout.custom({ timeBits: v, nodeBits: 1, sequenceBits: 1 }),
    (v) => layout.compose(v),
    (v) => layout.compose({ timestampMs: v }),
    (v) => layout.decode(v),
    (v) => new ManualClock(v),
    (v) => clock.setMs(v),
    (v) => clock.advanceMs(v),
  ]
  let refused = 0
  for (const call of calls) {
    for (const value of odd) {
      try {
        const result = call(value)
        if (typeof result === 'number') assert.ok(Number.isSafeInteger(result), `${call}: ${result}`)
      } catch (error) {
        if (error === boom) continue // the proxy's own error passes through untouched
        assert.ok(error instanceof Error, String(error))
        assert.match(String(error.code), /^ERR_FERROFLAKE_/, `${call} ${describe(value)}: ${error.message}`)
        refused++
      }
    }
  }
  assert.ok(refused > calls.length * 10, `most odd values are refused (${refused})`)
})

test('a ManualClock saturates at 2^64 - 1 and at 0, as in Rust, C and Python', () => {
  const clock = new ManualClock(1_700_000_000_000)
  clock.advanceMs(2n ** 64n - 1n) // used to throw OUT_OF_RANGE here
  assertThrowsCode(() => clock.nowMs, RangeError, 'ERR_FERROFLAKE_UNSAFE_INTEGER') // 2^64 - 1
  clock.rewindMs(2n ** 64n - 1n - 5n)
  assert.equal(clock.nowMs, 5)
  clock.rewindMs(10)
  assert.equal(clock.nowMs, 0)
})

test('core kinds map to RangeError (bad input) or Error (conditions of the moment)', () => {
  const clock = now()
  const generator = new Generator({ nodeId: 2, clock })
  generator.nextId()
  clock.rewindMs(60_000)
  const back = assertThrowsCode(() => generator.nextId(), Error, 'ERR_FERROFLAKE_CLOCK_MOVED_BACKWARDS')
  assert.match(back.message, /60000 ms behind/)
  clock.advanceMs(60_001)
  generator.setFenceMs(clock.nowMs)
  assertThrowsCode(() => generator.nextIdBigInt(), Error, 'ERR_FERROFLAKE_LEASE_EXPIRED')
})
