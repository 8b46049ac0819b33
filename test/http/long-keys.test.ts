// Ids at their documented limits over HTTP: NUL, '%', '/', and 4-byte
// UTF-8 in ids as long as the limits allow work like any other id (nodes,
// relations, neighbours, search, schedules), ids that extend each other stay
// apart, and one byte past a limit is a 400 that says so, never a 500.
import t from 'tap'
import { Graph, enc } from '../helpers/client'
import { serverForFile } from '../helpers/server'
import { keyPartBytes } from '../../src/contract/key-encoding'
import { MAX_ID_BYTES } from '../../src/graph/validate'

const fixture = serverForFile(t)
let g: Graph
t.before(() => { g = fixture.graph })

type Body = Record<string, unknown> & { relations?: Body[] }

/** An id of exactly `bytes` as keys measure it, from `unit` repeated, padded with 'a'. */
function idOf(unit: string, bytes: number): string {
  let s = ''
  while (keyPartBytes(s + unit) <= bytes) s += unit
  return s + 'a'.repeat(bytes - keyPartBytes(s))
}

const LIMIT_IDS = [
  idOf('\u0000', MAX_ID_BYTES), idOf('%2F/', MAX_ID_BYTES), idOf('a\u0000/😀%', MAX_ID_BYTES), idOf('中', MAX_ID_BYTES), idOf('\u0001x', MAX_ID_BYTES),
]

t.test('nodes with ids at the limit: stored, read, listed and searched', async (t) => {
  for (const [i, id] of LIMIT_IDS.entries()) {
    t.equal(keyPartBytes(id), MAX_ID_BYTES)
    t.equal((await g.put(`nodes/core/customer/${enc(id)}`, { name: `limit${i}` })).status, 204, `PUT ${i}`)
    const got = await g.get(`nodes/core/customer/${enc(id)}`)
    t.equal(got.status, 200, `GET ${i}`)
    t.equal(got.json<Body>().id, id, `the id of ${i} reads back`)
    const found = (await g.get(`nodes/core/customer?q=${enc(`name:"limit${i}"`)}`)).json<Body[]>()
    t.same(found.map((n) => n.id), [id], `search finds ${i} by its property`)
  }
  const listed = (await g.get('nodes/core/customer')).json<Body[]>().map((n) => n.id)
  for (const id of LIMIT_IDS) t.ok(listed.includes(id), 'listed')
})

t.test('ids that extend one another by NUL stay apart, however long', async (t) => {
  const base = 'n'.repeat(100)
  const ids = [base, `${base}\u0000`, `${base}\u0000tail`, `${base}\u0001`, `${base}%00`]
  for (const id of ids) t.equal((await g.put(`nodes/list/person/${enc(id)}`, { name: JSON.stringify(id) })).status, 204)
  const listed = (await g.get('nodes/list/person')).json<Body[]>()
  t.same(listed.map((n) => n.id).sort(), [...ids].sort(), 'each once, read back whole')
  t.equal((await g.delete(`nodes/list/person/${enc(`${base}\u0000`)}`)).status, 204)
  t.same((await g.get('nodes/list/person')).json<Body[]>().map((n) => n.id).sort(), ids.filter((i) => i !== `${base}\u0000`).sort())
  t.equal((await g.head('nodes/list/person')).headers['x-total-count'], String(ids.length - 1))
})

t.test('a relation whose three ids are at the limit, its neighbours, and its schedule', async (t) => {
  const [from, to, rel] = [LIMIT_IDS[0]!, LIMIT_IDS[2]!, LIMIT_IDS[1]!]
  const path = `relations/core/customer/${enc(from)}/core/product/${enc(to)}/core/viewed/${enc(rel)}`
  const put = await g.put(path, { views: 3 }, { 'platform-decay-at': '1h', 'platform-decay-parameters': 'p' })
  t.equal(put.status, 204, put.text)
  const got = await g.get(path)
  t.equal(got.status, 200)
  t.same([got.json<Body>().fid, got.json<Body>().tid, got.json<Body>().id], [from, to, rel])
  t.equal((await g.post(`${path.replace(/^relations\//, 'counters/')}/views`)).status, 200, 'a counter on it')
  const chunks = (await g.get(`neighbours/core/customer/${enc(from)}`)).json<Body[]>()
  const neighbour = chunks.find((c) => c.id === to)
  t.ok(neighbour, 'the target is a neighbour')
  t.same(neighbour?.relations?.map((r) => [r.fid, r.tid, r.id]), [[from, to, rel]])
  t.equal((await g.delete(`nodes/core/customer/${enc(from)}`)).status, 204, 'deleting the node ends its relation')
  t.equal((await g.get(path)).status, 404)
})

t.test('one byte past a limit is a 400 that names it', async (t) => {
  const over = [
    ['an id of 385 bytes', `nodes/core/customer/${enc('a'.repeat(MAX_ID_BYTES + 1))}`],
    ['193 NULs (each counts two bytes)', `nodes/core/customer/${enc('\u0000'.repeat(MAX_ID_BYTES / 2 + 1))}`],
    ['a relation id past the limit', `relations/core/customer/a/core/product/b/core/viewed/${enc('中'.repeat(129))}`],
    ['a namespace of 65 bytes', `nodes/${'n'.repeat(65)}/customer/x`],
    ['an id of 2000 bytes', `nodes/core/customer/${enc('x'.repeat(2000))}`],
  ] as const
  for (const [what, path] of over) {
    const res = await g.put(path, {})
    t.equal(res.status, 400, what)
    t.match(res.json<Body>(), { type: 'bad_request', message: /longer than \d+ bytes/ }, what)
  }
  const nul = await g.get(`nodes/core/customer/${enc('\u0000'.repeat(MAX_ID_BYTES / 2 + 1))}`)
  t.match(nul.json<Body>().message, /U\+0000 to U\+0004 count two bytes/)
  t.equal((await g.put('nodes/core/customer/ok', {}, { 'consent-reference': 'c'.repeat(MAX_ID_BYTES + 1) })).status, 400, 'a consent reference too')
  t.equal((await g.get(`consents/${enc('c'.repeat(MAX_ID_BYTES + 1))}`)).status, 400)
  t.equal((await g.delete(`webhooks/${enc('w'.repeat(MAX_ID_BYTES + 1))}`)).status, 400)
})
