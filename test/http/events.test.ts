// Events of spec section 6 over the cursor read: every change-event row,
// cascades, trace ids, STORE payloads for the four subjects, scheduleId
// replacement, a 2 s schedule that fires on time, a schedule due during
// downtime, long-poll, and retention (410).
import t from 'tap'
import { Graph, call, createConsent } from '../helpers/client'
import type { Envelope } from '../helpers/event-log'
import { getToken, removeDir, serverForFile, serverForTest, startServer, tempDir, type Server } from '../helpers/server'
import { sleep } from '../../bench/wait'

interface Page { events: Envelope[]; next: number }

const fixture = serverForFile(t)
let server: Server
let g: Graph
let cursor = 0

t.before(() => {
  server = fixture.server
  g = fixture.graph
})

/** The events since the last call (the test's own cursor). */
async function newEvents(graph = g): Promise<Envelope[]> {
  const page = (await graph.get(`events?after=${cursor}&limit=1000`)).json<Page>()
  cursor = page.next
  return page.events
}

const META = (): string => `${server.url}/graph/v1/demo/metamodel`

t.test('change events: node and relation CREATE (also implicit), no event for updates', async (t) => {
  await newEvents()
  await g.put('nodes/core/customer/e1', { name: 'E' })
  await g.put('nodes/core/customer/e1', { name: 'E2' })
  await g.put('relations/core/customer/e1/core/product/e2/core/viewed/r1', {})
  await g.put('relations/core/customer/e1/core/product/e2/core/viewed/r1', { views: 2 })
  await g.post('counters/core/customer/e3/core/product/e2/core/viewed/r2/views')
  await g.post('counters/core/customer/e3/core/product/e2/core/viewed/r2/views')
  const events = await newEvents()
  t.same(events.map((e) => [e.operation, e.schema.replace(META(), ''), e.payload]), [
    ['CREATE', '/nodes/core/customer', { id: 'e1', consentRefId: g.consent }],
    ['CREATE', '/nodes/core/product', { id: 'e2', consentRefId: g.consent }],
    ['CREATE', '/relations/core/customer/core/product/core/viewed', { consentRefId: g.consent, fromId: 'e1', toId: 'e2', relationshipId: 'r1' }],
    ['CREATE', '/nodes/core/customer', { id: 'e3', consentRefId: g.consent }],
    ['CREATE', '/relations/core/customer/core/product/core/viewed', { consentRefId: g.consent, fromId: 'e3', toId: 'e2', relationshipId: 'r2' }],
  ])
  const seqs = events.map((e) => e.sequence)
  t.same(seqs, [...seqs].sort((a, b) => a - b), 'sequences increase')
  t.equal(new Set(seqs).size, seqs.length)
  for (const e of events) {
    t.equal(e.tenant, 'demo')
    t.type(e.time, 'number')
  }
  t.equal(new Set(events.map((e) => e.id)).size, events.length, 'every notification has a new unique trace id')
})

t.test('DELETE of a node: one event for the node and one per removed relation, with the stored owner', async (t) => {
  const other = new Graph(server.url, 'demo', fixture.token, await createConsent(server.url, 'demo', fixture.token, 'other'))
  await g.put('relations/core/customer/d1/core/product/d2/core/viewed/a', {})
  await other.put('relations/core/customer/d3/core/customer/d1/core/knows/b', {})
  await newEvents()
  t.equal((await g.delete('nodes/core/customer/d1')).status, 204)
  const events = await newEvents()
  t.same(events.map((e) => [e.operation, e.schema.replace(META(), ''), e.payload]).sort(), [
    ['DELETE', '/nodes/core/customer', { id: 'd1', consentRefId: g.consent }],
    ['DELETE', '/relations/core/customer/core/customer/core/knows', { consentRefId: other.consent, fromId: 'd3', toId: 'd1', relationshipId: 'b' }],
    ['DELETE', '/relations/core/customer/core/product/core/viewed', { consentRefId: g.consent, fromId: 'd1', toId: 'd2', relationshipId: 'a' }],
  ].sort())
  await g.delete('nodes/core/customer/d1')
  await g.delete('relations/core/customer/zz/core/product/zz/core/viewed/zz')
  t.same(await newEvents(), [], 'idempotent deletes of missing elements announce nothing')
  await g.put('relations/core/customer/d4/core/product/d5/core/viewed/c', {})
  await newEvents()
  await g.delete('relations/core/customer/d4/core/product/d5/core/viewed/c')
  t.same((await newEvents()).map((e) => [e.operation, e.payload]), [['DELETE', { consentRefId: g.consent, fromId: 'd4', toId: 'd5', relationshipId: 'c' }]])
})

t.test('platform-context-trace-id is the id of every event the request causes', async (t) => {
  await newEvents()
  await g.put('relations/core/customer/t1/core/product/t2/core/viewed/r', {}, { 'platform-context-trace-id': 'trace-abc' })
  const created = await newEvents()
  t.equal(created.length, 3)
  t.same(created.map((e) => e.id), ['trace-abc', 'trace-abc', 'trace-abc'])
  const del = await call('DELETE', g.url('nodes/core/customer/t1'), { authorization: `Bearer ${g.token}`, 'platform-context-trace-id': 'trace-del' })
  t.equal(del.status, 204)
  t.same((await newEvents()).map((e) => e.id), ['trace-del', 'trace-del'])
})

t.test('STORE events: payload, schema and scheduleId shapes for the four subjects', async (t) => {
  await newEvents()
  const at = '2030-01-02T03:04:05Z'
  const h = { 'platform-schedule-event-at': at, 'platform-schedule-event-parameter': 'p1' }
  await g.put('nodes/core/customer/s1', { name: 'S' }, h)
  await g.put('nodes/core/customer/s1/age', 5, h)
  await g.put('relations/core/customer/s1/core/product/s2/core/viewed/r', {}, h)
  await g.post('counters/core/customer/s1/core/product/s2/core/viewed/r/views', h)
  const stores = (await newEvents()).filter((e) => e.operation === 'STORE')
  t.equal(stores.length, 4)
  for (const e of stores) t.equal(e.schema, 'core/ScheduledEvent')
  const common = { consentRefId: g.consent, scheduleAt: '2030-01-02T03:04:05.000Z', scheduleParameter: 'p1' }
  t.same(stores[0]!.payload, { id: 's1', schema: 'nodes/core/customer', scheduleId: 'nodes/core/customer/s1', ...common })
  t.same(stores[1]!.payload, { id: 's1', schema: 'nodes/core/customer/age', scheduleId: 'nodes/core/customer/age/s1', ...common })
  t.same(stores[2]!.payload, {
    fromId: 's1', toId: 's2', relationshipId: 'r', schema: 'relations/core/customer/core/product/core/viewed',
    scheduleId: 'relations/core/customer/s1/core/product/s2/core/viewed/r', ...common,
  })
  t.same(stores[3]!.payload, {
    fromId: 's1', toId: 's2', relationshipId: 'r', schema: 'relations/core/customer/core/product/core/viewed/views',
    scheduleId: 'relations/core/customer/s1/core/product/s2/core/viewed/views/r', ...common,
  })
  for (const bad of ['tomorrow', '5 minutes', 'P', 'PT', '2030-01-02', '1w', '-5s']) {
    const res = await g.put('nodes/core/customer/s1', { name: 'S' }, { 'platform-schedule-event-at': bad })
    t.equal(res.status, 400, `"${bad}" is refused`)
  }
})

t.test('a header value is read as UTF-8: a schedule parameter beyond ASCII arrives as sent, bytes that are not UTF-8 as U+FFFD', async (t) => {
  await newEvents()
  const at = '2030-01-02T03:04:05Z'
  // Header values travel as bytes: a string of one character per byte sends exactly these bytes.
  const asBytes = (b: Buffer): string => b.toString('latin1')
  const put = (id: string, value: Buffer) => g.put(`nodes/core/customer/${id}`, { name: 'U' }, { 'platform-schedule-event-at': at, 'platform-schedule-event-parameter': asBytes(value) })
  await put('u1', Buffer.from('café ☕ 名前!'))
  await put('u2', Buffer.from([0x61, 0xff, 0x62]))
  // uWebSockets.js's parser trims a value's trailing bytes beyond ASCII as if they were spaces (docs/manual/http-edges.md).
  await put('u3', Buffer.from('ends in é'))
  const stores = (await newEvents()).filter((e) => e.operation === 'STORE')
  t.same(stores.map((e) => e.payload.scheduleParameter), ['café ☕ 名前!', 'a\ufffdb', 'ends in'])
})

t.test('a 2 s schedule fires on time; a later call with the same scheduleId replaces it', async (t) => {
  await newEvents()
  const start = Date.now()
  await g.put('nodes/core/customer/f1', { name: 'F' }, { 'platform-schedule-event-at': '2s', 'platform-schedule-event-parameter': 'first' })
  await g.put('nodes/core/customer/f1', { name: 'F' }, { 'platform-schedule-event-at': 'PT2S', 'platform-schedule-event-parameter': 'second' })
  await g.put('relations/core/customer/f1/core/product/f2/core/viewed/r', {}, { 'platform-decay-at': '1s', 'platform-decay-parameters': 'half-life=7d' })
  const fired: Envelope[] = []
  while (Date.now() - start < 8000 && fired.filter((e) => e.operation !== 'STORE' && e.operation !== 'CREATE').length < 2) {
    const page = (await g.get(`events?after=${cursor}&wait=5`)).json<Page>()
    cursor = page.next
    fired.push(...page.events.map((e) => ({ ...e, received: Date.now() })))
  }
  const scheduled = fired.filter((e) => e.operation === 'SCHEDULED')
  t.equal(scheduled.length, 1, 'the replaced schedule does not fire')
  t.same(scheduled[0]!.payload, { id: 'f1', consentRefId: g.consent, scheduleParameter: 'second' })
  t.equal(scheduled[0]!.schema, 'nodes/core/customer')
  const stored = fired.find((e) => e.operation === 'STORE' && e.payload.scheduleParameter === 'second')!
  const due = Date.parse(stored.payload.scheduleAt as string)
  t.ok(scheduled[0]!.time >= due && scheduled[0]!.time - due < 1000, `fired ${scheduled[0]!.time - due} ms after its time`)
  const decay = fired.filter((e) => e.operation === 'DECAY')
  t.equal(decay.length, 1)
  t.same(decay[0]!.payload, { fromId: 'f1', toId: 'f2', id: 'r', consentRefId: g.consent, decayParameters: 'half-life=7d' })
  const decayStore = fired.find((e) => e.schema === 'core/DecayEvent')!
  t.match(decayStore.payload, { scheduleId: 'decay/relations/core/customer/f1/core/product/f2/core/viewed/r', decayParameters: 'half-life=7d' })
})

t.test('cursor read: validation and long-poll', async (t) => {
  for (const q of ['after=-1', 'after=x', 'limit=0', 'limit=1001', 'wait=31']) t.equal((await g.get(`events?${q}`)).status, 400, q)
  const page = (await g.get(`events?after=${cursor}`)).json<Page>()
  t.same(page, { events: [], next: cursor }, 'next is after when nothing is newer')
  const t0 = Date.now()
  const waiting = g.get(`events?after=${cursor}&wait=10`)
  await sleep(300)
  await g.put('nodes/core/customer/lp1', {})
  const woken = (await waiting).json<Page>()
  t.ok(Date.now() - t0 < 5000, 'the long-poll answered when the event came, not at the timeout')
  t.equal(woken.events[0]!.payload.id, 'lp1')
  cursor = woken.next
  const t1 = Date.now()
  t.same((await g.get(`events?after=${cursor}&wait=1`)).json<Page>().events, [])
  t.ok(Date.now() - t1 >= 900, 'waits for the time asked')
  const two = (await g.get('events?after=0&limit=2')).json<Page>()
  t.equal(two.events.length, 2)
  t.equal(two.next, two.events[1]!.sequence)
})

t.test('retention by count: a cursor older than what is kept is 410', async (t) => {
  const { graph: sg } = await serverForTest(t, { env: { EVENT_RETENTION_COUNT: '5' } })
  for (let i = 0; i < 8; i++) await sg.put(`nodes/core/customer/n${i}`, {})
  const res = await sg.get('events?after=0')
  t.equal(res.status, 410)
  t.equal(res.json<{ type: string }>().type, 'cursor_expired')
  const kept = (await sg.get('events?after=3')).json<Page>()
  t.same(kept.events.map((e) => e.sequence), [4, 5, 6, 7, 8])
})

t.test('a schedule due while the server was down fires right after the start', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const first = await startServer({ dataDir: dir })
  const token = await getToken(first.url)
  const dg = new Graph(first.url, 'demo', token, await createConsent(first.url, 'demo', token, 'down'))
  await dg.put('nodes/core/customer/late', {}, { 'platform-schedule-event-at': '2s', 'platform-schedule-event-parameter': 'while down' })
  const before = (await dg.get('events?after=0')).json<Page>().next
  await first.stop()
  await sleep(2500)
  const second = await startServer({ dataDir: dir })
  t.teardown(() => second.stop())
  const g2 = new Graph(second.url, 'demo', await getToken(second.url), dg.consent)
  const page = (await g2.get(`events?after=${before}&wait=5`)).json<Page>()
  t.equal(page.events[0]?.operation, 'SCHEDULED')
  t.same(page.events[0]?.payload, { id: 'late', consentRefId: dg.consent, scheduleParameter: 'while down' })
})
