// Date-prefixed order numbers on a SQLite store in a temp folder: text, bigint and day from
// one number, the day in the configured zone, exhaustion at the width, coded refusals.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { addon, assertThrowsCode } from './support.mjs'

const { SegmentAllocator, OrderNumbers } = addon
const code = (name) => `ERR_FERROFLAKE_${name}`

const folder = mkdtempSync(join(tmpdir(), 'ferroflake-node-orders-'))
after(() => rmSync(folder, { recursive: true, force: true }))
let stores = 0
const open = () => SegmentAllocator.open({ store: join(folder, `orders-${stores++}.db`) })

/** Today in `zone` as `yyyy-mm-dd`, from the runtime's own time-zone data. */
const today = (zone) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date())

/** Calls `issue` with today's date in `zone` read before and after, so midnight cannot fail it. */
async function onToday(zone, issue) {
  const before = today(zone)
  const result = await issue()
  return { result, days: new Set([before, today(zone)]) }
}

test('a number is text, bigint, day, counter and key, all of one number', async () => {
  const allocator = await open()
  const orders = allocator.orderNumbers()
  assert.ok(orders instanceof OrderNumbers)
  assert.deepEqual([orders.prefix, orders.zone, orders.width, orders.maxCounter], ['orders', 'UTC', 6, 999_999])
  const { result: numbers, days } = await onToday('UTC', async () => [await orders.next(), await orders.next(), await orders.next()])
  const [first] = numbers
  assert.ok(days.has(first.day), `${first.day} is today in UTC (${[...days]})`)
  const compact = first.day.replaceAll('-', '')
  assert.deepEqual(numbers.map((n) => n.counter), [1, 2, 3])
  for (const n of numbers) {
    assert.equal(n.text, `${compact}${String(n.counter).padStart(6, '0')}`)
    assert.equal(typeof n.value, 'bigint')
    assert.equal(n.value, BigInt(n.text))
    assert.equal(n.key, `orders:${compact}`)
  }
  await allocator.close()
})

test('width 1 gives 9 numbers, then the exhausted error; nothing is issued past it', async () => {
  const allocator = await open()
  const orders = allocator.orderNumbers({ prefix: 'tiny', width: 1, step: 4 })
  assert.equal(orders.maxCounter, 9)
  const numbers = []
  for (let i = 0; i < 9; i++) numbers.push(await orders.next())
  assert.deepEqual(numbers.map((n) => n.counter), [1, 2, 3, 4, 5, 6, 7, 8, 9])
  assert.ok(numbers.every((n) => n.text.length === 9 && n.key.startsWith('tiny:')))
  for (let i = 0; i < 2; i++) {
    await assert.rejects(orders.next(), (e) => e.code === code('SEGMENT_EXHAUSTED') && e.constructor === Error && /tiny:/.test(e.message))
  }
  await allocator.close()
})

test("a zone's midnight starts its day: Kiritimati (UTC+14) and Pago Pago (UTC-11) are never on one date", async () => {
  const allocator = await open()
  const seen = []
  for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Asia/Shanghai']) {
    const orders = allocator.orderNumbers({ prefix: 'zoned', zone, width: 4 })
    assert.equal(orders.zone, zone)
    const { result: n, days } = await onToday(zone, () => orders.next())
    assert.ok(days.has(n.day), `${zone}: ${n.day} is today there (${[...days]})`)
    assert.equal(n.text.slice(0, 8), n.day.replaceAll('-', ''), zone)
    assert.equal(n.key, `zoned:${n.text.slice(0, 8)}`)
    seen.push(n.day)
  }
  assert.notEqual(seen[0], seen[1], '25 hours apart')
  await allocator.close()
})

test('two allocators on one store share the day key without a repeat', async () => {
  const store = join(folder, 'shared.db')
  const [a, b] = [await SegmentAllocator.open({ store }), await SegmentAllocator.open({ store })]
  const [ordersA, ordersB] = [a, b].map((allocator) => allocator.orderNumbers({ prefix: 'shared', step: 3 }))
  const numbers = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? ordersA : ordersB).next()))
  const texts = new Set(numbers.map((n) => n.text))
  assert.equal(texts.size, numbers.length, 'no number twice')
  await a.close()
  await b.close()
})

test('bad options are coded refusals; a closed allocator refuses', async () => {
  const allocator = await open()
  const thrown = [
    [{ zone: 'Mars/Olympus_Mons' }, RangeError, 'SEGMENT_INVALID_CONFIG'],
    [{ width: 0 }, RangeError, 'SEGMENT_INVALID_CONFIG'],
    [{ width: 11 }, RangeError, 'SEGMENT_INVALID_CONFIG'],
    [{ step: 0 }, RangeError, 'SEGMENT_INVALID_CONFIG'],
    [{ step: 2 ** 31 }, RangeError, 'SEGMENT_INVALID_CONFIG'],
    [{ prefix: 'p'.repeat(300) }, RangeError, 'SEGMENT_INVALID_KEY'],
    [{ width: 2 ** 40 }, RangeError, 'OUT_OF_RANGE'],
    [{ width: 1.5 }, RangeError, 'NOT_AN_INTEGER'],
    [{ width: '6' }, TypeError, 'INVALID_TYPE'],
    [{ zone: 8 }, TypeError, 'INVALID_TYPE'],
    [{ zones: 'UTC' }, TypeError, 'UNKNOWN_OPTION'],
    ['UTC', TypeError, 'INVALID_TYPE'],
  ]
  for (const [options, errorClass, name] of thrown) {
    const error = assertThrowsCode(() => allocator.orderNumbers(options), errorClass, code(name))
    if (options.zone === 'Mars/Olympus_Mons') assert.match(error.message, /Mars\/Olympus_Mons/)
  }
  assertThrowsCode(() => new OrderNumbers(), TypeError, code('INVALID_TYPE'))
  const orders = allocator.orderNumbers({ prefix: 'closing' })
  await orders.next()
  await allocator.close()
  await assert.rejects(orders.next(), (e) => e.code === code('SEGMENT_CLOSED'))
  assertThrowsCode(() => allocator.orderNumbers({ prefix: 'after' }), Error, code('SEGMENT_CLOSED'))
})
