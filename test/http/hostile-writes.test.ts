// Hostile writes must fail alone and never stop the process: a body nested
// far deeper than any real document, a schedule no timestamp can name inside
// a busy batch, and writes racing the revocation of their consent.
import t from 'tap'
import { Graph, call, createConsent, pool } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
let g: Graph
t.before(() => { g = fixture.graph })

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
}

t.test('a body nested thousands of levels deep is refused and the process lives', async (t) => {
  const deep = nested(3500)
  const auth = { authorization: `Bearer ${g.token}`, 'content-type': 'application/json' }
  const targets: [string, Record<string, string>][] = [
    ['nodes/core/customer/deep1', { 'consent-reference': fixture.consent }],
    ['nodes/core/customer/deep2', { 'consent-reference': 'garbage' }],
    ['nodes/core/customer/deep3/properties/extra', { 'consent-reference': fixture.consent }],
    ['relations/core/customer/deep1/core/product/p1/core/viewed/v1', { 'consent-reference': fixture.consent }],
  ]
  for (const [path, headers] of targets) {
    const res = await call('PUT', g.url(path), { ...auth, ...headers }, deep)
    t.ok(res.status >= 400 && res.status < 500, `${path}: ${res.status} ${res.text.slice(0, 200)}`)
  }
  t.equal((await g.put('nodes/core/customer/after-deep', { name: 'still here' })).status, 204, 'the server still writes')
  t.equal((await g.get('nodes/core/customer/after-deep')).status, 200)
  t.equal((await call('GET', `${fixture.server.url}/oauth2/v1/.well-known/openid-configuration`)).status, 200, 'and the OAuth server answers')
})

t.test('real nested enricher data still fits', async (t) => {
  const doc = { prefs: { colours: ['red', { shade: 'dark', codes: [1, 2, 3] }], sizes: { shoe: 42 } } }
  t.equal((await g.put('nodes/core/customer/nested-ok', doc)).status, 204)
  t.same((await g.get('nodes/core/customer/nested-ok')).json<Record<string, unknown>>().prefs, doc.prefs)
})

t.test('a schedule no timestamp can name is a 400 and poisons nothing in its batch', async (t) => {
  const results = await Promise.all(Array.from({ length: 60 }, (_, i) => {
    const bad = i % 6 === 3
    return g.put(`nodes/list/person/batch-${i}`, { name: `p${i}` }, bad ? { 'platform-schedule-event-at': '99999999d' } : { 'platform-schedule-event-at': '1h' })
      .then((res) => ({ i, bad, res }))
  }))
  for (const { i, bad, res } of results) {
    t.equal(res.status, bad ? 400 : 204, `write ${i}${bad ? ' (bad schedule)' : ''}: ${res.text}`)
    if (bad) t.match(res.text, /platform-schedule-event-at/)
  }
  for (const { i, bad } of results) {
    t.equal((await g.get(`nodes/list/person/batch-${i}`)).status, bad ? 404 : 200, `node ${i} ${bad ? 'not stored' : 'stored'}`)
  }
  const list = await g.head('nodes/list/person')
  t.equal(list.status, 200)
  t.equal(list.headers['x-total-count'], '50', 'the count holds exactly the stored nodes')
})

t.test('writes racing the revocation of their consent are applied (2xx) or refused (403), never 500', async (t) => {
  const consent = await createConsent(fixture.server.url, 'demo', g.token, 'racer')
  const racer = new Graph(g.base, g.tenant, g.token, consent)
  let revoked: number | undefined
  const answers = await pool(300, 30, async (i) => {
    if (i === 120) revoked = (await call('DELETE', racer.url(`consents/${consent}`), { authorization: `Bearer ${g.token}` })).status
    const res = await racer.put(`nodes/core/customer/race-${i}`, { name: `r${i}` })
    return res.status
  })
  t.equal(revoked, 204)
  const bad = answers.filter((s) => s !== 204 && s !== 403)
  t.same(bad, [], 'only 204 and 403')
  t.ok(answers.filter((s) => s === 403).length >= 100, 'the writes after the revocation are refused')
  for (const [i, status] of answers.entries()) {
    if (status !== 403) continue
    t.equal((await racer.get(`nodes/core/customer/race-${i}`)).status, 404, `refused write ${i} left nothing`)
  }
})
