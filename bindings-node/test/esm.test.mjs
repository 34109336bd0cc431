// `import` and `require` give the same addon.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import ferroflake, {
  Generator, LeasedGenerator, SegmentAllocator, SegmentKey, OrderNumbers, MaskKeyring, Layout, ManualClock, decode, encode, parse,
  errorCodes,
} from 'ferroflake'

const required = createRequire(import.meta.url)('ferroflake')

test('named and default ESM exports are the CommonJS exports', () => {
  assert.equal(ferroflake, required)
  const named = {
    Generator, LeasedGenerator, SegmentAllocator, SegmentKey, OrderNumbers, MaskKeyring, Layout, ManualClock, decode, encode, parse, errorCodes,
  }
  for (const [name, value] of Object.entries(named)) assert.equal(value, required[name], name)
  const publicNames = Object.keys(required).filter((name) => !name.startsWith('__'))
  assert.deepEqual(publicNames.sort(), Object.keys(named).sort())
})

test('an ESM caller gets working IDs', () => {
  const generator = new Generator({ nodeId: 1, clock: new ManualClock(Date.now()) })
  const id = generator.nextId()
  assert.ok(Number.isSafeInteger(id))
  assert.equal(decode(id).nodeId, 1)
  assert.equal(parse(encode(id, 'base32'), 'base32'), BigInt(id))
})

test('index.d.ts declares exactly the runtime exports', () => {
  const dts = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8')
  const declared = [...dts.matchAll(/^export declare (?:class|function|const) (\w+)/gm)].map((m) => m[1])
  assert.deepEqual(declared.sort(), Object.keys(required).sort())
  const generatorMethods = Object.getOwnPropertyNames(Generator.prototype).filter((name) => name !== 'constructor')
  const classBody = dts.slice(dts.indexOf('export declare class Generator'), dts.indexOf('\n}\n', dts.indexOf('export declare class Generator')))
  for (const name of generatorMethods) assert.match(classBody, new RegExp(`\\b${name}\\b`), `Generator.${name} is typed`)
})
