// JSON bodies are bounded in depth and element count at the edge: a body
// nested thousands of levels deep used to overflow the stack on its way to a
// shard actor and take the whole process down.
import t from 'tap'
import { call, enc, type Graph } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
let g: Graph
t.before(() => { g = fixture.graph })

const nested = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)
const put = (path: string, body: string, consent = fixture.consent) =>
  call('PUT', g.url(path), { authorization: `Bearer ${g.token}`, 'content-type': 'application/json', 'consent-reference': consent }, body)

t.test('a 3,325-level body is 400 naming the limit, and the server lives on', async (t) => {
  const attacks = [
    put('nodes/core/customer/deep1', `{"x":${nested(3325)}}`, 'garbage-consent'),
    put('nodes/core/customer/deep2/x', nested(3325)),
    put(`relations/core/customer/a/core/product/b/core/viewed/${enc('r1')}`, `{"x":${nested(3325)}}`, 'garbage-consent'),
    call('POST', g.url('consents'), { authorization: `Bearer ${g.token}`, 'content-type': 'application/json' }, nested(3325)),
  ]
  for (const res of await Promise.all(attacks)) {
    t.equal(res.status, 400)
    t.match(res.json<{ message: string }>().message, /nested deeper than 64 levels.*--max-json-depth/)
  }
  t.equal((await g.put('nodes/core/customer/alive', { name: 'Still here' })).status, 204, 'the server still answers')
  t.equal(fixture.server.proc.exitCode, null)
})

t.test('real nested data within the limit is stored and read back', async (t) => {
  // The body object is level 1, so a property may nest 63 levels.
  const value = JSON.parse(nested(62)) as unknown
  t.equal((await g.put('nodes/core/customer/nested', { profile: value, tags: [[1, 2], { k: ['v'] }] })).status, 204)
  const node = (await g.get('nodes/core/customer/nested')).json<{ profile: unknown; tags: unknown }>()
  t.same(node.profile, value)
  t.same(node.tags, [[1, 2], { k: ['v'] }])
  t.equal((await put('nodes/core/customer/nested/profile', nested(64))).status, 204, 'a property PUT body may nest 64 levels')
  t.equal((await put('nodes/core/customer/nested/profile', nested(65))).status, 400)
})

t.test('more than 100,000 elements is 400 naming the limit', async (t) => {
  const many = `[${new Array(100_000).fill('0').join(',')}]`
  const res = await put('nodes/core/customer/many/list', many)
  t.equal(res.status, 400)
  t.match(res.json<{ message: string }>().message, /more than 100000 elements.*--max-json-elements/)
  const fine = `[${new Array(99_999).fill('0').join(',')}]`
  t.equal((await put('nodes/core/customer/many/list', fine)).status, 204, '99,999 items and the array itself pass')
})
