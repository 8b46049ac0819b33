// The WebSocket event stream /graph/v1/{tenant}/events/stream?after=: real
// clients against the real server. Envelopes arrive one per message, in
// order, the same as the cursor read; a client resumes from its last
// sequence with no gap and no duplicate; the token may come in the header or
// in access_token; a bad one is refused at the upgrade with the JSON error;
// a consumer that stops reading does not make the server buffer the backlog.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { connect, type Socket } from 'node:net'
import { WebSocket } from 'undici'
import { createConsent, enc, Graph, pool } from '../helpers/client'
import { logEnd, readLog, type Envelope } from '../helpers/event-log'
import { getToken, serverForFile, serverForTest, type FileFixture } from '../helpers/server'
import { sleep } from '../../bench/wait'

const fixture = serverForFile(t)

function streamUrl(base: string, tenant: string, query: string): string {
  return `${base.replace(/^http/, 'ws')}/graph/v1/${enc(tenant)}/events/stream${query}`
}

/** An undici WebSocket that collects messages and lets the test wait for a count or the close. */
class Consumer {
  readonly messages: string[] = []
  readonly ws: WebSocket
  readonly opened: Promise<void>
  readonly closed: Promise<{ code: number; reason: string }>
  private waiters: (() => void)[] = []

  constructor(url: string, headers: Record<string, string> = {}) {
    this.ws = new WebSocket(url, { headers })
    this.opened = new Promise((resolve, reject) => {
      this.ws.addEventListener('open', () => resolve())
      this.ws.addEventListener('error', () => reject(new Error('the WebSocket did not open')))
    })
    this.opened.catch(() => undefined)
    this.closed = new Promise((resolve) => this.ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })))
    this.ws.addEventListener('message', (e) => {
      this.messages.push(String(e.data))
      for (const w of this.waiters) w()
    })
  }

  async count(n: number, ms = 15_000): Promise<string[]> {
    const deadline = Date.now() + ms
    while (this.messages.length < n) {
      if (Date.now() > deadline) throw new Error(`got ${this.messages.length} of ${n} messages`)
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 100)
      })
      this.waiters = []
    }
    return this.messages.slice(0, n)
  }

  async close(): Promise<void> {
    this.ws.close()
    await this.closed
  }
}

/** A raw upgrade request, for the answers a WebSocket client does not show (status, JSON error). */
function rawUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), ...headers },
    })
    req.on('upgrade', (res: IncomingMessage, socket: Socket) => {
      socket.destroy()
      resolve({ status: res.statusCode ?? 0, body: '' })
    })
    req.on('response', (res: IncomingMessage) => {
      let body = ''
      res.on('data', (d: Buffer) => { body += d.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

t.test('events arrive one per message, in order, with the spec fields, as the cursor read serves them', async (t) => {
  const g = fixture.graph
  const start = await logEnd(g)
  const c = new Consumer(streamUrl(g.base, 'demo', `?after=${start}`), { authorization: `Bearer ${g.token}` })
  await c.opened
  const trace = `trace-${randomBytes(4).toString('hex')}`
  t.equal((await g.put('nodes/core/customer/ws-a', { name: 'A' }, { 'platform-context-trace-id': trace })).status, 204)
  t.equal((await g.put('relations/core/customer/ws-a/core/product/ws-p/core/viewed/r1', {})).status, 204)
  t.equal((await g.delete('nodes/core/customer/ws-a')).status, 204)
  const got = (await c.count(5)).map((m) => JSON.parse(m) as Envelope)
  t.same(got.map((e) => e.sequence), [1, 2, 3, 4, 5].map((i) => start + i), 'consecutive sequences after `after`')
  t.same(got.map((e) => e.operation), ['CREATE', 'CREATE', 'CREATE', 'DELETE', 'DELETE'])
  for (const e of got) {
    t.same(Object.keys(e).sort(), ['id', 'operation', 'payload', 'schema', 'sequence', 'tenant', 'time'], 'envelope fields')
    t.equal(e.tenant, 'demo')
    t.type(e.time, 'number')
  }
  t.equal(got[0]!.id, trace, 'the request trace id is the event id')
  t.match(got[0]!, { schema: `${g.base}/graph/v1/demo/metamodel/nodes/core/customer`, payload: { id: 'ws-a', consentRefId: g.consent } })
  t.match(got[2]!, { payload: { fromId: 'ws-a', toId: 'ws-p', relationshipId: 'r1', consentRefId: g.consent } })
  t.same(c.messages.slice(0, 5), (await readLog(g, start)).texts, 'the same envelopes as GET events')
  await c.close()
})

t.test('without `after` the stream starts at the end of the log', async (t) => {
  const g = fixture.graph
  t.equal((await g.put('nodes/core/customer/ws-old', { name: 'old' })).status, 204)
  const end = await logEnd(g)
  const c = new Consumer(streamUrl(g.base, 'demo', ''), { authorization: `Bearer ${g.token}` })
  await c.opened
  // The stream finds the end of the log just after opening.
  await sleep(300)
  t.equal((await g.put('nodes/core/customer/ws-new', { name: 'new' })).status, 204)
  const [first] = await c.count(1)
  t.match(JSON.parse(first!), { sequence: end + 1, payload: { id: 'ws-new' } }, 'only what was appended after connecting')
  await c.close()
})

t.test('a client resumes after a disconnect from its last sequence: no gap, no duplicate', async (t) => {
  const g = fixture.graph
  const start = await logEnd(g)
  const put = (i: number) => g.put(`nodes/core/customer/resume-${i}`, { n: i })
  for (let i = 0; i < 10; i++) t.equal((await put(i)).status, 204)
  const first = new Consumer(streamUrl(g.base, 'demo', `?after=${start}`), { authorization: `Bearer ${g.token}` })
  const part1 = (await first.count(4)).map((m) => JSON.parse(m) as Envelope)
  await first.close()
  for (let i = 10; i < 15; i++) t.equal((await put(i)).status, 204)
  const last = part1[part1.length - 1]!.sequence
  const second = new Consumer(streamUrl(g.base, 'demo', `?after=${last}`), { authorization: `Bearer ${g.token}` })
  const part2 = (await second.count(15 - 4)).map((m) => JSON.parse(m) as Envelope)
  const all = [...part1, ...part2].map((e) => e.sequence)
  t.same(all, Array.from({ length: 15 }, (_, i) => start + 1 + i), 'every sequence once, in order')
  t.same([...part1, ...part2].map((e) => e.payload.id), Array.from({ length: 15 }, (_, i) => `resume-${i}`))
  await sleep(200)
  t.equal(second.messages.length, 11, 'nothing more than the log holds')
  await second.close()
})

t.test('access_token in the query authenticates browsers; bad tokens, scopes, tenants and cursors are refused at the upgrade', async (t) => {
  const g = fixture.graph
  const start = await logEnd(g)
  const byQuery = new Consumer(streamUrl(g.base, 'demo', `?after=${start}&access_token=${enc(g.token)}`))
  await byQuery.opened
  t.equal((await g.put('nodes/core/customer/ws-query', {})).status, 204)
  t.match(JSON.parse((await byQuery.count(1))[0]!), { sequence: start + 1, payload: { id: 'ws-query' } })
  await byQuery.close()

  const url = `${g.base}/graph/v1/demo/events/stream`
  const bad = await rawUpgrade(`${url}?access_token=not-a-token`)
  t.equal(bad.status, 401)
  t.match(JSON.parse(bad.body), { status: 401, type: 'insufficient_credentials' })
  const none = await rawUpgrade(url)
  t.equal(none.status, 401)
  t.match(JSON.parse((await rawUpgrade(`${g.base}/graph/v1/acme/events/stream`, { authorization: `Bearer ${g.token}` })).body), { status: 403, type: 'forbidden' })
  const manageOnly = await getToken(g.base, 'platform.profile_graph_manage')
  t.match(JSON.parse((await rawUpgrade(url, { authorization: `Bearer ${manageOnly}` })).body), { status: 403, type: 'insufficient_scope' })
  t.match(JSON.parse((await rawUpgrade(`${url}?after=-1`, { authorization: `Bearer ${g.token}` })).body), { status: 400, type: 'bad_request' })
  t.equal((await rawUpgrade(url, { authorization: `Bearer ${g.token}` })).status, 101, 'a good token upgrades')

  const refused = new Consumer(streamUrl(g.base, 'demo', '?access_token=nope'))
  await t.rejects(refused.opened, 'a WebSocket client with a bad token does not connect')
})

t.test('the stream path without an upgrade is a clear 400; other requests still reach the routes', async (t) => {
  const g = fixture.graph
  const plain = await g.get('events/stream')
  t.equal(plain.status, 400)
  t.match(plain.json(), { type: 'bad_request', message: /WebSocket/ })
  t.equal((await g.get('events?after=0&limit=1')).status, 200)
  t.equal((await g.get('events/other')).status, 404)
  t.equal((await g.put('nodes/core/customer/ws-route', {})).status, 204)
})

/** A server of the test's own, with these options (test/helpers/server.ts). */
const ownServer = (t: { teardown(fn: () => Promise<void>): void }, args: string[]): Promise<FileFixture> => serverForTest(t, { args })

t.test('open streams per tenant are capped: one more is refused at the upgrade with 503 until one closes', async (t) => {
  const { server, token } = await ownServer(t, ['--max-streams-per-tenant', '2'])
  const auth = { authorization: `Bearer ${token}` }
  const url = streamUrl(server.url, 'demo', '')
  const httpUrl = `${server.url}/graph/v1/demo/events/stream`
  const first = new Consumer(url, auth)
  const second = new Consumer(url, auth)
  await Promise.all([first.opened, second.opened])

  const refused = await rawUpgrade(httpUrl, auth)
  t.equal(refused.status, 503)
  t.match(JSON.parse(refused.body), { status: 503, type: 'service_unavailable', message: /tenant "demo" has 2 open event streams, the most allowed/ })

  await first.close()
  // The server counts the stream as gone once its close handler ran; the client sees the close after that.
  t.equal((await rawUpgrade(httpUrl, auth)).status, 101, 'a closed stream frees its place')
  await second.close()
})

t.test('a cursor older than retention closes the stream with 4410; a shutdown with 1001', async (t) => {
  const { server, token } = await ownServer(t, ['--event-retention-count', '3'])
  const consent = await createConsent(server.url, 'demo', token, 'subject')
  const g = new Graph(server.url, 'demo', token, consent)
  for (let i = 0; i < 6; i++) t.equal((await g.put(`nodes/core/customer/old-${i}`, {})).status, 204)
  const c = new Consumer(streamUrl(server.url, 'demo', '?after=0'), { authorization: `Bearer ${token}` })
  const closed = await c.closed
  t.equal(closed.code, 4410)
  t.match(closed.reason, /cursor expired: events up to 3 are no longer kept/)
  t.equal(c.messages.length, 0)
  const ok = new Consumer(streamUrl(server.url, 'demo', '?after=3'), { authorization: `Bearer ${token}` })
  t.same((await ok.count(3)).map((m) => (JSON.parse(m) as Envelope).sequence), [4, 5, 6], 'the cursor the reason names works')
  await server.stop()
  t.match(await ok.closed, { code: 1001, reason: /shutting down/ }, 'a shutdown closes streams with 1001, going away')
})

/**
 * A WebSocket client over a raw socket, so the test can stop reading
 * (socket.pause) the way a slow consumer does; it parses the server's
 * unmasked frames and counts the text messages and their bytes.
 */
class RawConsumer {
  messages = 0
  bytes = 0
  lastSequence = 0
  private buffer: Buffer = Buffer.alloc(0)
  private onProgress: () => void = () => undefined

  private constructor(readonly socket: Socket) {}

  static open(base: string, path: string, token: string): Promise<RawConsumer> {
    const u = new URL(base)
    return new Promise((resolve, reject) => {
      const socket = connect(Number(u.port), u.hostname)
      const consumer = new RawConsumer(socket)
      let head = ''
      const onHandshake = (d: Buffer): void => {
        head += d.toString('latin1')
        const end = head.indexOf('\r\n\r\n')
        if (end === -1) return
        socket.off('data', onHandshake)
        if (!head.startsWith('HTTP/1.1 101')) {
          reject(new Error(`no upgrade: ${head}`))
          return
        }
        socket.on('data', (chunk: Buffer) => consumer.take(chunk))
        const rest = Buffer.from(head.slice(end + 4), 'latin1')
        if (rest.length > 0) consumer.take(rest)
        resolve(consumer)
      }
      socket.on('data', onHandshake)
      socket.on('error', reject)
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n`
        + `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${token}\r\n\r\n`)
    })
  }

  private take(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
    for (;;) {
      const b = this.buffer
      if (b.length < 2) break
      let len = b[1]! & 0x7f
      let offset = 2
      if (len === 126) {
        if (b.length < 4) break
        len = b.readUInt16BE(2)
        offset = 4
      } else if (len === 127) {
        if (b.length < 10) break
        len = Number(b.readBigUInt64BE(2))
        offset = 10
      }
      if (b.length < offset + len) break
      if ((b[0]! & 0x0f) === 1) {
        const text = b.subarray(offset, offset + len).toString()
        this.messages++
        this.bytes += len
        const seq = (JSON.parse(text) as Envelope).sequence
        if (seq !== this.lastSequence + 1 && this.lastSequence !== 0) throw new Error(`sequence ${seq} after ${this.lastSequence}`)
        this.lastSequence = seq
      }
      this.buffer = b.subarray(offset + len)
    }
    this.onProgress()
  }

  async until(sequence: number, ms: number): Promise<void> {
    const deadline = Date.now() + ms
    while (this.lastSequence < sequence) {
      if (Date.now() > deadline) throw new Error(`stream reached ${this.lastSequence}, not ${sequence}`)
      await new Promise<void>((resolve) => {
        this.onProgress = resolve
        setTimeout(resolve, 200)
      })
    }
  }
}

function rssAnonBytes(pid: number): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? 0 : Number(m[1]) * 1024
}

t.test('a consumer that stops reading does not make the server buffer the backlog', async (t) => {
  const g = fixture.graph
  const start = await logEnd(g)
  // Big envelopes: a 2,000-character trace id and long ids; each relation PUT makes three events.
  const trace = 't'.repeat(2000)
  const long = (p: string, i: number): string => `${p}-${i}-${'x'.repeat(300)}`
  const REQUESTS = 8000
  await pool(REQUESTS, 64, async (i) => {
    const res = await g.put(`relations/core/customer/${long('c', i)}/core/product/${long('p', i)}/core/viewed/${long('r', i)}`, {}, { 'platform-context-trace-id': trace })
    if (res.status !== 204) throw new Error(`PUT ${i}: ${res.status} ${res.text}`)
  })
  const end = await logEnd(g)
  t.equal(end - start, REQUESTS * 3, 'three events per request')

  const pid = fixture.server.proc.pid!
  await sleep(500)
  const baseline = rssAnonBytes(pid)
  let peak = baseline
  const sampler = setInterval(() => { peak = Math.max(peak, rssAnonBytes(pid)) }, 50)

  const consumer = await RawConsumer.open(g.base, `/graph/v1/demo/events/stream?after=${start}`, g.token)
  consumer.socket.pause()
  // Not reading for a while, while the log keeps growing (each append wakes the stream).
  for (let i = 0; i < 20; i++) t.equal((await g.put(`nodes/core/customer/during-pause-${i}`, {})).status, 204)
  await sleep(3000)
  const pausedPeak = peak
  consumer.socket.resume()
  await consumer.until(end + 20, 120_000)
  clearInterval(sampler)
  consumer.socket.destroy()

  t.equal(consumer.messages, end + 20 - start, 'every event arrived, in order')
  const pausedGrowth = pausedPeak - baseline
  const growth = peak - baseline
  t.comment(`streamed ${(consumer.bytes / 1e6).toFixed(1)} MB; server RssAnon ${(baseline / 1e6).toFixed(1)} MB -> ${(pausedPeak / 1e6).toFixed(1)} MB paused, ${(peak / 1e6).toFixed(1)} MB peak`)
  t.ok(consumer.bytes > 50e6, 'the backlog is large')
  // While the consumer does not read, a stream that ignored back-pressure would hold the whole backlog
  // (~50 MB measured); with it, a few MB. Once it reads again, reading and sending 60+ MB makes
  // garbage the heap holds for a while (up to ~20 MB seen on a loaded machine): a looser bound.
  t.ok(pausedGrowth < consumer.bytes / 4, `server private memory grew ${(pausedGrowth / 1e6).toFixed(1)} MB while a ${(consumer.bytes / 1e6).toFixed(1)} MB backlog waited`)
  t.ok(growth < consumer.bytes / 2, `and ${(growth / 1e6).toFixed(1)} MB at its peak while it was read`)
})
