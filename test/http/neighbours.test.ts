// Neighbours over HTTP: source first, each neighbour once with all the
// relations joining it to the source (both directions), JSON array or NDJSON,
// streamed in chunks for a large neighbourhood, and a client that aborts.
import t from 'tap'
import { request } from 'undici'
import { Graph, enc, pool } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
let g: Graph
t.before(() => { g = fixture.graph })

type Chunk = Record<string, unknown> & { relations?: Record<string, unknown>[]; properties: Record<string, unknown> }

t.test('source first, then each neighbour once with every joining relation', async (t) => {
  await g.put('nodes/core/customer/src', { name: 'Source Node' })
  await g.put('relations/core/customer/src/core/product/pa/core/viewed/r1', { views: 1 })
  await g.put('relations/core/customer/src/core/product/pa/core/viewed/r2', { views: 2 })
  await g.put('relations/core/customer/friend/core/customer/src/core/knows/k1', { since: 2020 })
  await g.put('relations/core/customer/src/core/customer/friend/core/knows/k2', {})
  const res = await g.get('neighbours/core/customer/src')
  t.equal(res.status, 200)
  const chunks = res.json<Chunk[]>()
  t.equal(chunks.length, 3)
  const [source, ...rest] = chunks
  t.equal(source!.id, 'src')
  t.equal(source!.locked, false)
  t.same(source!.properties, { name: 'Source Node' })
  t.equal(source!.relations, undefined, 'the source chunk has no relations')
  t.equal(source!.neighbours_url, `${fixture.server.url}/graph/v1/demo/neighbours/core/customer/src`)
  for (const f of ['tenant', 'schema', 'created', 'createdByHybrisClient', 'consentReference']) t.ok(f in source!, f)
  const pa = rest.find((c) => c.id === 'pa')!
  t.same(pa.relations!.map((r) => r.id).sort(), ['r1', 'r2'])
  t.same(pa.relations!.find((r) => r.id === 'r2')!.properties, { views: 2 })
  const friend = rest.find((c) => c.id === 'friend')!
  const dirs = friend.relations!.map((r) => `${r.fid}->${r.tid}:${r.id}`).sort()
  t.same(dirs, ['friend->src:k1', 'src->friend:k2'], 'incoming and outgoing relations')
  const r = friend.relations![0]!
  for (const f of ['id', 'fid', 'tid', 'tenant', 'schema', 'created', 'createdByHybrisClient', 'locked', 'consentReference', 'properties']) t.ok(f in r, `relation chunk has ${f}`)
})

t.test('a node without relations answers just itself; a missing node is 404', async (t) => {
  await g.put('nodes/core/customer/lonely', {})
  t.same((await g.get('neighbours/core/customer/lonely')).json<Chunk[]>().map((c) => c.id), ['lonely'])
  const res = await g.get('neighbours/core/customer/nobody')
  t.equal(res.status, 404)
  t.equal(res.json<Chunk>().type, 'element_not_found')
})

t.test('Accept: application/x-ndjson gives one chunk per line', async (t) => {
  const res = await g.get('neighbours/core/customer/src', { accept: 'application/x-ndjson' })
  t.equal(res.status, 200)
  t.match(res.headers['content-type'], /application\/x-ndjson/)
  const lines = res.text.split('\n').filter((l) => l !== '')
  t.equal(lines.length, 3)
  t.equal((JSON.parse(lines[0]!) as Chunk).id, 'src')
})

t.test('an encoded source id works and neighbours_url leads back', async (t) => {
  await g.put(`relations/core/customer/${enc('a/b c')}/core/product/${enc('x/y')}/core/viewed/v`, {})
  const chunks = (await g.get(`neighbours/core/customer/${enc('a/b c')}`)).json<Chunk[]>()
  t.equal(chunks[1]!.id, 'x/y')
  const back = await request(chunks[1]!.neighbours_url as string, { headers: { authorization: `Bearer ${g.token}` } })
  const again = (await back.body.json()) as Chunk[]
  t.equal(again[0]!.id, 'x/y')
  t.equal(again[1]!.id, 'a/b c')
})

const BIG = 20_000

t.test(`a neighbourhood of ${BIG} streams whole, chunked, as valid JSON and NDJSON`, async (t) => {
  await pool(BIG, 64, async (i) => {
    const res = await g.put(`relations/core/customer/big/core/product/n${i}/core/viewed/r`, {})
    if (res.status !== 204) throw new Error(`PUT ${i}: ${res.status}`)
  })
  const res = await request(g.url('neighbours/core/customer/big'), { headers: { authorization: `Bearer ${g.token}` } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['transfer-encoding'], 'chunked', 'streamed, not buffered into one Content-Length body')
  let pieces = 0
  let text = ''
  for await (const piece of res.body) {
    pieces++
    text += (piece as Buffer).toString()
  }
  t.ok(pieces > 1, `arrived in ${pieces} pieces`)
  const chunks = JSON.parse(text) as Chunk[]
  t.equal(chunks.length, BIG + 1)
  t.equal(chunks[0]!.id, 'big')
  t.equal(new Set(chunks.slice(1).map((c) => c.id)).size, BIG, 'each neighbour once')
  const nd = await g.get('neighbours/core/customer/big', { accept: 'application/x-ndjson' })
  t.equal(nd.text.split('\n').filter((l) => l !== '').length, BIG + 1)
})

t.test('a client that aborts midway stops the stream; the server carries on', async (t) => {
  for (let round = 0; round < 5; round++) {
    const controller = new AbortController()
    const res = await request(g.url('neighbours/core/customer/big'), { headers: { authorization: `Bearer ${g.token}` }, signal: controller.signal })
    t.equal(res.statusCode, 200)
    const first = await new Promise<string>((resolve) => res.body.once('data', (d: Buffer) => resolve(d.toString())))
    t.match(first, /^\[\{"id":"big"/, 'the source node comes first')
    controller.abort()
    await new Promise<void>((resolve) => {
      res.body.once('error', () => resolve())
      res.body.once('close', () => resolve())
      res.body.resume()
    })
  }
  const after = await g.get('nodes/core/customer/big')
  t.equal(after.status, 200, 'still serving after aborted streams')
  t.notMatch(fixture.server.output(), /internal error|crashed/, 'no errors logged')
})

t.test('list GET of many nodes streams too', async (t) => {
  const res = await g.get('nodes/core/product?limit=15000')
  t.equal(res.status, 200)
  t.equal(res.json<Chunk[]>().length, 15000)
})
