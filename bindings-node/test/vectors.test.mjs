// Every case of testdata/vectors.json, through the Node API.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { addon, vectors, camelSpec, layoutFrom, assertThrowsCode, FORMATS } from './support.mjs'

const { Layout, Generator, ManualClock, encode, parse } = addon
const code = (name) => `ERR_FERROFLAKE_${name}`

test('presets match vectors.json', () => {
  assert.deepEqual(Layout.presetNames().sort(), Object.keys(vectors.presets).sort())
  for (const [name, spec] of Object.entries(vectors.presets)) {
    const preset = Layout.preset(name)
    assert.ok(preset.equals(layoutFrom(spec)), name)
    assert.equal(preset.totalBits, spec.total_bits, name)
    assert.equal(preset.capacityPerSecond, spec.capacity_per_second, name)
    assert.equal(preset.exhaustsAtMs, spec.exhausts_at_ms, name)
    assert.equal(preset.tickMs, spec.tick_ms, name)
    assert.equal(preset.epochMs, spec.epoch_ms, name)
    assert.equal(preset.order, spec.order, name)
    assert.equal(preset.isJsSafe, spec.total_bits <= 53, name)
    assert.deepEqual(preset.toJSON(), camelSpec(spec))
  }
})

test('ids compose, decode and encode as recorded', () => {
  assert.ok(vectors.ids.length > 0)
  for (const c of vectors.ids) {
    const layout = layoutFrom(c.layout)
    if (c.preset) assert.ok(Layout.preset(c.preset).equals(layout), c.name)
    const id = BigInt(c.id)
    const parts = {
      timestampMs: c.parts.timestamp_ms,
      nodeId: c.parts.node,
      sequence: c.parts.sequence,
      shard: c.parts.shard,
    }
    assert.equal(layout.compose(parts), id, c.name)
    const expected = {
      timestampMs: c.decoded.timestamp_ms,
      nodeId: c.decoded.node,
      sequence: c.decoded.sequence,
      shard: c.decoded.shard,
    }
    // The same ID given as a bigint, a decimal string and (when exact) a number.
    const forms = [id, c.id, ...(id <= BigInt(Number.MAX_SAFE_INTEGER) ? [Number(id)] : [])]
    for (const form of forms) {
      const { date, ...decoded } = layout.decode(form)
      assert.deepEqual(decoded, expected, `${c.name} ${typeof form}`)
      assert.equal(date.getTime(), expected.timestampMs, c.name)
    }
    for (const format of FORMATS) {
      assert.equal(encode(id, format), c[format], `${c.name} ${format}`)
      assert.equal(parse(c[format], format), id, `${c.name} ${format}`)
    }
    assert.equal(encode(c.id), c.dec, c.name)
  }
})

test('the vectors hold every format and no other', () => {
  const idFields = ['name', 'preset', 'layout', 'parts', 'decoded', 'id']
  for (const c of vectors.ids) {
    const texts = Object.keys(c).filter((k) => !idFields.includes(k))
    assert.deepEqual(texts.sort(), [...FORMATS].sort(), c.name)
  }
  for (const c of vectors.mask.cases) {
    assert.deepEqual(Object.keys(c.text).sort(), [...FORMATS].sort())
  }
})

test('bad layouts are refused with their kind', () => {
  for (const c of vectors.layout_errors) {
    assertThrowsCode(() => layoutFrom(c.spec), RangeError, code(c.error))
  }
})

test('layout spellings read, print and decode as recorded', () => {
  assert.ok(vectors.layout_spellings.length > 0)
  for (const c of vectors.layout_spellings) {
    const layout = Layout.preset(c.spelling)
    assert.ok(layout.equals(layoutFrom(c.layout)), c.name)
    assert.equal(layout.toString(), c.display, c.name)
    assert.equal(`${layout}`, c.display, c.name)
    assert.ok(Layout.preset(layout.toString()).equals(layout), c.name)
    const parts = {
      timestampMs: c.parts.timestamp_ms,
      nodeId: c.parts.node,
      sequence: c.parts.sequence,
      shard: c.parts.shard,
    }
    assert.equal(layout.compose(parts), BigInt(c.id), c.name)
    const { date, ...decoded } = layout.decode(BigInt(c.id))
    assert.deepEqual(decoded, {
      timestampMs: c.decoded.timestamp_ms,
      nodeId: c.decoded.node,
      sequence: c.decoded.sequence,
      shard: c.decoded.shard,
    }, c.name)
    assert.equal(date.getTime(), c.decoded.timestamp_ms, c.name)
  }
})

test('bad layout spellings are refused with their kind', () => {
  for (const c of vectors.layout_spelling_errors) {
    assertThrowsCode(() => Layout.preset(c.spelling), RangeError, code(c.error))
  }
})

test('bad generators are refused with their kind (manual clock at now_ms)', () => {
  for (const c of vectors.generator_errors) {
    const clock = new ManualClock(c.now_ms)
    const options = { nodeId: c.node, layout: layoutFrom(c.layout), clock }
    if (c.resume_after_ms !== undefined) options.resumeAfterMs = BigInt(c.resume_after_ms)
    assertThrowsCode(() => new Generator(options), RangeError, code(c.error))
  }
})

test('values parse refuses are refused by encode too', () => {
  assert.ok(vectors.encode_errors.length > 0)
  for (const c of vectors.encode_errors) {
    assertThrowsCode(() => encode(BigInt(c.id), c.format), RangeError, code(c.error))
  }
})

test('bad parts and ids are refused with their kind', () => {
  for (const c of vectors.compose_errors) {
    const parts = {
      timestampMs: c.parts.timestamp_ms,
      nodeId: c.parts.node,
      sequence: c.parts.sequence,
      shard: c.parts.shard,
    }
    assertThrowsCode(() => layoutFrom(c.layout).compose(parts), RangeError, code(c.error))
  }
  for (const c of vectors.decode_errors) {
    assertThrowsCode(() => layoutFrom(c.layout).decode(BigInt(c.id)), RangeError, code(c.error))
    // As a string, the core's decimal parser speaks first: no ID is above 2^63 - 1.
    const asString = BigInt(c.id) > 2n ** 63n - 1n ? 'PARSE_OVERFLOW' : c.error
    assertThrowsCode(() => layoutFrom(c.layout).decode(c.id), RangeError, code(asString))
  }
})

test('strings parse or fail as recorded', () => {
  for (const c of vectors.parse_errors) {
    assertThrowsCode(() => parse(c.input, c.format), RangeError, code(c.error))
  }
  for (const c of vectors.parse_ok) {
    assert.equal(parse(c.input, c.format), BigInt(c.id), `${c.format} ${c.input}`)
  }
})
