// The client's bulk writes and event stream against the real server: a
// writable stream of lines with each line's answer read while writing (and
// only the failures with answers 'errors'), and an answer cut short; the
// WebSocket stream as an async iterator from a cursor, resumed without gap
// or duplicate after the connection drops, and the service's error when
// the upgrade is refused; webhooks.
import t from 'tap'
import { WebSocket } from 'undici'
import { ProfileGraphClient, bulkLines, isProfileGraphError, type BulkResult, type GraphEvent, type WebSocketConstructor, type WebSocketLike } from '@profile-graph/client'
import { getToken, serverForFile } from '../helpers/server'

// webhooks may name this machine: their deliveries are not what is tested here
const fixture = serverForFile(t, { args: ['--webhook-allow', '127.0.0.1'] })
const credentials = { clientId: 'demo-enricher', clientSecret: 'demo-secret' }
// Node 20 has no global WebSocket: undici's is the standard one
const client = (WS: WebSocketConstructor = WebSocket): ProfileGraphClient =>
  new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', credentials, WebSocket: WS })

const customer = (id: string) => ({ ns: 'core', type: 'customer', id })
const viewed = (from: string, to: string) => ({ from: customer(from), to: { ns: 'core', type: 'product', id: to }, rel: { ns: 'core', type: 'viewed', id: 'v1' } })

t.test('bulk: lines written to a stream, each answered as its single request, in requests of maxLines while the writing goes on', async (t) => {
  const graph = client()
  const { consent } = fixture
  const bulk = graph.bulk({ maxLines: 300 })
  const lines = 2000
  const results: BulkResult[] = []
  let answeredBeforeClose = 0
  const reading = (async () => { for await (const r of bulk.results()) results.push(r) })()
  const writer = bulk.writable.getWriter()
  for (let i = 0; i < lines; i++) {
    await writer.write(bulkLines.putNode(customer(`bulk-${i}`), { name: `Bulk ${i}`, age: i % 100 }, consent))
  }
  answeredBeforeClose = results.length
  await writer.write(bulkLines.incrementCounter(viewed('bulk-0', 'tea'), 'views', consent))
  await writer.write(bulkLines.putNode(customer('bulk-x'), { name: 'X' }, 'cr_not_a_consent'))
  await writer.write(bulkLines.putProperty(customer('bulk-1'), 'email', 'one@example.com', consent))
  await writer.write(bulkLines.createConsent({ subject: 'bulk-subject' }))
  await writer.write(bulkLines.deleteNode(customer('bulk-2')))
  await writer.close()
  await reading
  const summary = await bulk.summary()

  t.ok(answeredBeforeClose >= 1800, `answers arrived while writing (${answeredBeforeClose} before the last line was written)`)
  t.same(summary, { done: lines + 5, failed: 1 }, 'the summary')
  t.equal(results.length, lines + 5, 'one result per line')
  t.ok(results.every((r, i) => r.index === i), 'in the order written')
  t.ok(results.slice(0, lines).every((r) => r.status === 204), 'the node writes: 204')
  t.equal((results[lines]!.body as { views: number }).views, 1, 'the counter answer carries its body')
  t.equal(results[lines + 1]!.status, 403)
  t.ok(isProfileGraphError(results[lines + 1]!.error, 'forbidden'), "a failed line's error, typed")
  t.equal(results[lines + 2]!.status, 204)
  t.match(results[lines + 3]!.body, { consentReference: /^cr_/ }, 'a created consent')
  t.equal(results[lines + 4]!.status, 204)
  t.equal(await graph.getProperty(customer('bulk-1'), 'email'), 'one@example.com', 'applied')
  t.ok(isProfileGraphError(await graph.getNode(customer('bulk-2')).catch((e: unknown) => e), 'element_not_found'), 'applied in order')
})

t.test("bulk with answers 'errors': the whole body first, then only the failed lines with their index", async (t) => {
  const graph = client()
  const { consent } = fixture
  const bulk = graph.bulk({ answers: 'errors' })
  const writer = bulk.writable.getWriter()
  for (let i = 0; i < 500; i++) {
    const line = i % 100 === 7 ? bulkLines.putNode(customer(`err-${i}`), { id: 'reserved' }, consent) : bulkLines.putNode(customer(`err-${i}`), { age: i }, consent)
    await writer.write(line)
  }
  await writer.close()
  const failed: BulkResult[] = []
  for await (const r of bulk.results()) failed.push(r)
  t.same(failed.map((r) => r.index), [7, 107, 207, 307, 407], 'only the failed lines, by their index')
  t.ok(failed.every((r) => isProfileGraphError(r.error, 'validation_violation') && r.status === 400), 'each with its error')
  t.same(await bulk.summary(), { done: 500, failed: 5 })
})

t.test('bulk: a refused request is thrown, and the writer fails too', async (t) => {
  const graph = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'acme', credentials })
  const bulk = graph.bulk()
  const writer = bulk.writable.getWriter()
  const writing = (async () => {
    for (let i = 0; i < 10_000; i++) await writer.write(bulkLines.deleteNode(customer(`x${i}`)))
    await writer.close()
  })()
  const error = await bulk.summary().catch((e: unknown) => e)
  t.ok(isProfileGraphError(error, 'forbidden'), "another tenant's bulk request: forbidden")
  t.rejects(writing, 'the writer is told')
  await writing.catch(() => undefined)
})

t.test('bulk: an answer cut short fails the summary (too few answers with all, no summary line with errors)', async (t) => {
  // Drops the last line of each bulk answer, as a connection closed early would.
  const cutting = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const res = await fetch(input, init)
    if (!String(input).includes('/bulk?')) return res
    const kept = (await res.text()).split('\n').filter((l) => l !== '').slice(0, -1).map((l) => `${l}\n`).join('')
    return new Response(kept, { status: res.status, headers: { 'content-type': 'application/x-ndjson' } })
  }
  for (const [answers, message] of [['all', /with 2 answers to 3 lines/], ['errors', /before its summary line/]] as const) {
    const graph = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', credentials, fetch: cutting })
    const bulk = graph.bulk({ answers })
    const writer = bulk.writable.getWriter()
    const writing = (async () => {
      for (let i = 0; i < 3; i++) await writer.write(bulkLines.putNode(customer(`cut-${answers}-${i}`), { age: i }, fixture.consent))
      await writer.close()
    })()
    const error = await bulk.summary().catch((e: unknown) => e)
    t.ok(isProfileGraphError(error, 'network_error'), `${answers}: network_error`)
    t.match((error as Error).message, message)
    await writing.catch(() => undefined)
  }
})

/** The events of `n` writes made after reading the log's end; returns the end. */
async function writeEvents(graph: ProfileGraphClient, prefix: string, n: number): Promise<number> {
  const end = (await graph.readEvents({ after: 0, limit: 1000 }))
  let after = end.next
  for (let page = end; page.events.length > 0; after = page.next) page = await graph.readEvents({ after, limit: 1000 })
  for (let i = 0; i < n; i++) await graph.putNode(customer(`${prefix}-${i}`), { age: i }, fixture.consent)
  return after
}

t.test('the event stream: from a cursor, in order; leaving the loop closes it; resuming from the last sequence', async (t) => {
  const graph = client()
  const start = await writeEvents(graph, 'ev', 10)
  const seen: GraphEvent[] = []
  for await (const e of graph.events({ after: start })) {
    seen.push(e)
    if (seen.length === 4) break
  }
  t.same(seen.map((e) => e.sequence), [1, 2, 3, 4].map((i) => start + i), 'consecutive sequences after the cursor')
  for await (const e of graph.events({ after: seen[3]!.sequence })) {
    seen.push(e)
    if (seen.length === 10) break
  }
  t.same(seen.map((e) => e.sequence), Array.from({ length: 10 }, (_, i) => start + i + 1), 'resumed: no gap, no duplicate')
  t.match(seen[9], { payload: { id: 'ev-9' }, tenant: 'demo' }, 'the envelopes of the writes')
})

t.test('the event stream reconnects after the connection drops, from its last sequence', async (t) => {
  const sockets: DroppingSocket[] = []
  // the first connection is cut after two messages, as a network failure would (1006)
  class DroppingSocket implements WebSocketLike {
    private readonly inner: WebSocket
    private readonly listeners = new Map<string, ((e: never) => void)[]>()
    private messages = 0
    constructor(readonly url: string) {
      sockets.push(this)
      this.inner = new WebSocket(url)
      const drop = sockets.length === 1
      this.inner.addEventListener('open', () => this.emit('open', {}))
      this.inner.addEventListener('message', (m) => {
        this.emit('message', { data: m.data })
        if (drop && ++this.messages === 2) {
          this.inner.close()
          this.emit('close', { code: 1006, reason: '' })
        }
      })
      this.inner.addEventListener('close', (c) => { if (!drop) this.emit('close', { code: c.code, reason: c.reason }) })
    }
    addEventListener(type: string, listener: (e: never) => void): void {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener])
    }
    private emit(type: string, event: object): void {
      for (const l of this.listeners.get(type) ?? []) (l as (e: object) => void)(event)
    }
    get readyState(): number { return this.inner.readyState }
    close(code?: number): void { this.inner.close(code) }
  }
  const graph = client(DroppingSocket)
  const start = await writeEvents(graph, 'drop', 6)
  const seen: number[] = []
  for await (const e of graph.events({ after: start })) if (seen.push(e.sequence) === 6) break
  t.same(seen, [1, 2, 3, 4, 5, 6].map((i) => start + i), 'every event once, across the reconnection')
  t.equal(sockets.length, 2, 'one reconnection')
  t.match(sockets[1]!.url, new RegExp(`after=${start + 2}(&|$)`), 'from the last sequence seen')
  t.match(sockets[1]!.url, /access_token=/, 'with the token in access_token, as browsers send it')
})

t.test("a refused upgrade is thrown as the service's error", async (t) => {
  const graph = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', token: 'not-a-token', WebSocket })
  for (const after of [0, undefined]) {
    const error = await (async () => { for await (const _ of graph.events({ after })) break })().catch((e: unknown) => e)
    t.ok(isProfileGraphError(error, 'insufficient_credentials'), `a bad token: 401 insufficient_credentials (after ${after})`)
  }
  const otherTenant = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'acme', credentials, WebSocket })
  const error = await (async () => { for await (const _ of otherTenant.events()) break })().catch((e: unknown) => e)
  t.ok(isProfileGraphError(error, 'forbidden'), "another tenant's stream: 403 forbidden")
})

t.test('the event stream goes on with a new token once the old one is revoked (close 4401)', async (t) => {
  let token = await getToken(fixture.server.url)
  const urls: string[] = []
  // undici's WebSocket, recording each connection's address
  const Recording = class extends WebSocket { constructor(url: string) { urls.push(url); super(url) } }
  const graph = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', token: () => token, WebSocket: Recording })
  const start = await writeEvents(graph, 'renew', 2)
  const seen: number[] = []
  for await (const e of graph.events({ after: start })) {
    seen.push(e.sequence)
    if (seen.length === 2) {
      const revoked = await fetch(`${fixture.server.url}/oauth2/v1/revoke`, {
        method: 'POST', body: new URLSearchParams({ token }),
        headers: { authorization: `Basic ${btoa('demo-enricher:demo-secret')}`, 'content-type': 'application/x-www-form-urlencoded' },
      })
      t.equal(revoked.status, 200, 'the first token revoked')
      token = await getToken(fixture.server.url)
      for (let i = 2; i < 4; i++) await graph.putNode(customer(`renew-${i}`), { age: i }, fixture.consent)
    }
    if (seen.length === 4) break
  }
  t.same(seen, [1, 2, 3, 4].map((i) => start + i), 'every event once')
  t.equal(urls.length, 2, 'one reconnection')
  t.match(urls[1], `access_token=${encodeURIComponent(token)}`, 'with the new token')
})

t.test('webhooks: created with their secret, listed, read and deleted', async (t) => {
  const graph = client()
  const created = await graph.createWebhook({ url: 'http://127.0.0.1:9/hook' })
  t.match(created, { id: String, url: 'http://127.0.0.1:9/hook', secret: String }, 'the secret, shown once')
  t.ok((await graph.listWebhooks()).some((w) => w.id === created.id), 'listed')
  t.equal((await graph.getWebhook(created.id)).url, created.url, 'read')
  await graph.deleteWebhook(created.id)
  t.ok(isProfileGraphError(await graph.getWebhook(created.id).catch((e: unknown) => e), 'element_not_found'), 'deleted')
})
