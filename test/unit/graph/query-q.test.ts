import t from 'tap'
import { parseCriterion } from '../../../src/graph/query-q'
import { ApiError } from '../../../src/core/errors'

function rejects(t: tap.Test, q: string): void {
  const err = t.throws(() => parseCriterion(q), `${JSON.stringify(q)} is rejected`) as ApiError
  t.ok(err instanceof ApiError, 'an ApiError')
  t.equal(err.status, 400)
  t.equal(err.type, 'bad_request')
  t.match(err.message, /q must be one criterion/)
}

t.test('string form: quoted letters, digits and spaces', async (t) => {
  t.same(parseCriterion('name:"John Smith"'), { property: 'name', value: 'John Smith' })
  t.same(parseCriterion('name:"John"'), { property: 'name', value: 'John' })
  t.same(parseCriterion('code:"A1 B2 3"'), { property: 'code', value: 'A1 B2 3' })
  t.same(parseCriterion('city:"Zürich Москва 東京"'), { property: 'city', value: 'Zürich Москва 東京' }, 'Unicode letters count as letters')
  t.same(parseCriterion('name:""'), { property: 'name', value: '' }, 'an empty quoted string is a string')
})

t.test('a quoted number stays a string', async (t) => {
  const c = parseCriterion('zip:"42"')
  t.equal(c.value, '42')
  t.equal(typeof c.value, 'string')
})

t.test('number form: integers, negatives, decimals, exponents', async (t) => {
  t.same(parseCriterion('age:42'), { property: 'age', value: 42 })
  t.same(parseCriterion('age:0'), { property: 'age', value: 0 })
  t.same(parseCriterion('balance:-17'), { property: 'balance', value: -17 })
  t.same(parseCriterion('price:19.99'), { property: 'price', value: 19.99 })
  t.same(parseCriterion('delta:-0.5'), { property: 'delta', value: -0.5 })
  t.same(parseCriterion('big:1e3'), { property: 'big', value: 1000 })
  t.same(parseCriterion('small:2.5E-2'), { property: 'small', value: 0.025 })
  t.equal(typeof parseCriterion('age:42').value, 'number')
})

t.test('boolean form', async (t) => {
  t.same(parseCriterion('vip:true'), { property: 'vip', value: true })
  t.same(parseCriterion('vip:false'), { property: 'vip', value: false })
  t.equal(typeof parseCriterion('vip:false').value, 'boolean')
})

t.test('property names may hold dots, dashes and underscores', async (t) => {
  t.same(parseCriterion('first_name:"Ann"'), { property: 'first_name', value: 'Ann' })
  t.same(parseCriterion('a.b-c:1'), { property: 'a.b-c', value: 1 })
})

t.test('two criteria are rejected', async (t) => {
  rejects(t, 'name:"John" age:42')
  rejects(t, 'age:42 name:"John"')
  rejects(t, 'age:42,vip:true')
  rejects(t, 'age:42 AND vip:true')
  rejects(t, 'name:"John"&age:42')
})

t.test('unquoted strings are rejected (with or without spaces)', async (t) => {
  rejects(t, 'name:John Smith')
  rejects(t, 'name:John')
  rejects(t, 'vip:TRUE')
  rejects(t, 'name:"John Smith')
  rejects(t, 'name:John Smith"')
})

t.test('punctuation inside the quotes is rejected', async (t) => {
  rejects(t, 'name:"John-Smith"')
  rejects(t, 'email:"a@example.com"')
  rejects(t, 'name:"O\'Brien"')
  rejects(t, 'name:"a"b"')
  rejects(t, 'name:"John, Smith"')
})

t.test('empty property, missing colon or value, bad numbers are rejected', async (t) => {
  rejects(t, ':"John"')
  rejects(t, ':42')
  rejects(t, ':true')
  rejects(t, '')
  rejects(t, 'name')
  rejects(t, 'name:')
  rejects(t, 'age:4 2')
  rejects(t, 'age:.5')
  rejects(t, 'age:5.')
  rejects(t, 'age:+5')
  rejects(t, 'age:0x10')
  rejects(t, 'first name:"x"')
  rejects(t, ' age:42')
})
