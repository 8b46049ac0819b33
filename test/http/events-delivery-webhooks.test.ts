// Webhooks: register, list, show, delete (scope manage, http(s) only), and
// delivery to a receiver in the test (node:http on 127.0.0.1): one signed
// POST per event, in order, at least once, retried with a doubling back-off
// (WEBHOOK_RETRY_BASE_MS=50 here, so no test waits for real back-off), resumed
// after a restart from the persisted cursor, and suspended after a day of
// failures (the server's clock moved a day ahead through CLOCK_OFFSET_FILE).
// The receivers are on loopback, so the server allows 127.0.0.1
// (WEBHOOK_ALLOW); webhooks-ssrf.test.ts tests the default deny.
import t from 'tap'
import { createHmac } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { createServer, type Server as HttpServer } from 'node:http'
import { join } from 'node:path'
import { contentsUnder } from '../helpers/files'
import { call, createConsent, Graph } from '../helpers/client'
import { logEnd, readLog } from '../helpers/event-log'
import { getToken, removeDir, startServer, tempDir, type Server } from '../helpers/server'
import { NOT_ACCEPTED, retryDelay, signature } from '../../src/events/webhook-delivery'
import { sleep } from '../../bench/wait'

const RETRY_BASE_MS = 50
const env = {} as { server: Server; token: string; consent: string; clockFile: string; dir: string }

async function startService(): Promise<void> {
  env.server = await startServer({ dataDir: env.dir, env: { WEBHOOK_RETRY_BASE_MS: String(RETRY_BASE_MS), CLOCK_OFFSET_FILE: env.clockFile, WEBHOOK_ALLOW: '127.0.0.1' } })
}

t.before(async () => {
  env.dir = tempDir('webhooks-test-')
  env.clockFile = join(env.dir, 'clock-offset')
  writeFileSync(env.clockFile, '0')
  await startService()
  env.token = await getToken(env.server.url)
  env.consent = await createConsent(env.server.url, 'demo', env.token, 'subject-1')
})
t.teardown(async () => {
  await env.server.stop()
  removeDir(env.dir)
})

const graph = (): Graph => new Graph(env.server.url, 'demo', env.token, env.consent)
const json = { 'content-type': 'application/json' }

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(25)
  }
}

interface Delivery {
  body: string
  signature: string
  contentType: string
  status: number
  at: number
}

/** A webhook receiver: records every POST and answers with the status `respond` picks. */
class Receiver {
  readonly deliveries: Delivery[] = []
  respond: (attempt: number) => number = () => 200
  url = ''
  private readonly http: HttpServer

  constructor() {
    this.http = createServer((req, res) => {
      let body = ''
      req.on('data', (d: Buffer) => { body += d.toString() })
      req.on('end', () => {
        const status = this.respond(this.deliveries.length + 1)
        this.deliveries.push({ body, signature: String(req.headers['platform-signature']), contentType: String(req.headers['content-type']), status, at: Date.now() })
        res.writeHead(status).end(status < 300 ? 'ok' : 'failing')
      })
    })
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve))
    const address = this.http.address()
    if (address === null || typeof address === 'string') throw new Error('no address')
    this.url = `http://127.0.0.1:${address.port}/hook`
    return this
  }

  accepted(): Delivery[] {
    return this.deliveries.filter((d) => d.status >= 200 && d.status < 300)
  }

  close(): Promise<void> {
    this.http.closeAllConnections()
    return new Promise((resolve) => this.http.close(() => resolve()))
  }
}

interface Registered { id: string; url: string; secret: string }
interface Listed { id: string; url: string; cursor: number; failingSince: number | null; suspended: boolean; lastError: string | null }

async function register(g: Graph, url: string): Promise<Registered> {
  const res = await call('POST', g.url('webhooks'), { authorization: `Bearer ${g.token}`, ...json }, JSON.stringify({ url }))
  if (res.status !== 201) throw new Error(`register: ${res.status} ${res.text}`)
  return res.json<Registered>()
}

const sequenceOf = (d: Delivery): number => (JSON.parse(d.body) as { sequence: number }).sequence
const hmac = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

t.test('signature and back-off arithmetic', async (t) => {
  t.equal(signature('s3cret', '{"a":1}'), hmac('s3cret', '{"a":1}'))
  t.same([1, 2, 3, 4, 9, 10, 40].map((n) => retryDelay(1000, n)), [1000, 2000, 4000, 8000, 256_000, 300_000, 300_000], '1 s doubling to a 5 min cap')
})

t.test('register, list, show and delete; validation and scope', async (t) => {
  const g = graph()
  const post = (body: string, headers: Record<string, string> = { authorization: `Bearer ${g.token}`, ...json }) => call('POST', g.url('webhooks'), headers, body)
  for (const [body, why] of [
    ['{}', 'no url'], ['{"url": 5}', 'url not a string'], ['"https://example.com"', 'not an object'], ['{"url": "not a url"}', 'not absolute'],
    ['{"url": "ftp://example.com/x"}', 'ftp'], ['{"url": "javascript:alert(1)"}', 'javascript'], ['{"url": "file:///etc/passwd"}', 'file'], ['{', 'malformed JSON'],
  ] as const) {
    const res = await post(body)
    t.equal(res.status, 400, why)
    t.equal(res.json<{ type: string }>().type, 'bad_request', why)
  }
  t.match((await post('{"url": "ftp://example.com/x"}')).json(), { message: /http or https/ })
  t.equal((await post('{"url": "https://example.com/"}', { authorization: `Bearer ${g.token}`, 'content-type': 'text/plain' })).status, 415)
  t.equal((await post('{"url": "https://example.com/"}', json)).status, 401)
  const viewOnly = await getToken(g.base, 'platform.profile_graph_view')
  t.match((await post('{"url": "https://example.com/"}', { authorization: `Bearer ${viewOnly}`, ...json })).json(), { status: 403, type: 'insufficient_scope' })
  t.equal((await call('GET', g.url('webhooks'), { authorization: `Bearer ${viewOnly}` })).status, 403, 'listing needs manage too')
  t.match((await call('POST', `${g.base}/graph/v1/acme/webhooks`, { authorization: `Bearer ${g.token}`, ...json }, '{"url": "https://example.com/"}')).json(), { status: 403, type: 'forbidden' })

  const a = await register(g, 'https://hooks.example.com/a?x=1')
  const b = await register(g, 'http://127.0.0.1:9/b')
  t.match(a.id, /^wh_[A-Za-z0-9_-]+$/)
  t.equal(a.url, 'https://hooks.example.com/a?x=1')
  t.match(a.secret, /^[0-9a-f]{64}$/, '256 random bits')
  t.not(a.secret, b.secret)

  const list = await g.get('webhooks', {})
  t.equal(list.status, 200)
  const hooks = list.json<Listed[]>()
  t.same(hooks.map((h) => h.id).sort(), [a.id, b.id].sort())
  t.notOk(list.text.includes(a.secret) || list.text.includes('secret'), 'no secrets in the list')
  const shown = await g.get(`webhooks/${a.id}`)
  t.match(shown.json(), { id: a.id, url: a.url, cursor: Number, failingSince: null, suspended: false, lastError: null })

  // The secret is sealed at rest: the URL is found in the shard files, the secret nowhere.
  await sleep(200)
  const files = contentsUnder(join(env.server.dataDir, 'data')).map((f) => f.bytes)
  t.ok(files.some((f) => f.includes(a.url)), 'the scan sees stored text')
  t.notOk(files.some((f) => f.includes(a.secret) || f.includes(Buffer.from(a.secret, 'hex'))), 'no plaintext secret in any data file')

  t.equal((await g.delete(`webhooks/${a.id}`)).status, 204)
  t.equal((await g.delete(`webhooks/${a.id}`)).status, 404, 'deleting again: not found')
  t.equal((await g.get(`webhooks/${a.id}`)).status, 404)
  t.same((await g.get('webhooks')).json<Listed[]>().map((h) => h.id), [b.id])
  t.equal((await g.delete(`webhooks/${b.id}`)).status, 204)
  t.same((await g.get('webhooks')).json(), [])
})

t.test('a receiver that fails twice then succeeds gets every event once, in order, signed', async (t) => {
  const g = graph()
  const receiver = await new Receiver().listen()
  t.teardown(() => receiver.close())
  receiver.respond = (attempt) => (attempt <= 2 ? 500 : 200)
  const hook = await register(g, receiver.url)
  const start = await logEnd(g)
  t.equal((await g.put('nodes/core/customer/wh-a', { n: 1 })).status, 204)
  t.equal((await g.put('relations/core/customer/wh-a/core/product/wh-p/core/viewed/r', {})).status, 204)
  t.equal((await g.delete('nodes/core/customer/wh-a')).status, 204)
  const expected = (await readLog(g, start, 5)).texts
  t.equal(expected.length, 5)
  await waitUntil('five accepted deliveries', () => receiver.accepted().length >= 5)
  await sleep(300)

  t.same(receiver.deliveries.slice(0, 3).map(sequenceOf), [start + 1, start + 1, start + 1], 'the first event retried until accepted')
  t.same(receiver.accepted().map((d) => d.body), expected, 'each event accepted once, in order, as the cursor read serves it')
  t.equal(receiver.deliveries.length, 7, 'two failures plus five deliveries, nothing more')
  for (const d of receiver.deliveries) {
    t.equal(d.signature, hmac(hook.secret, d.body), 'platform-signature is the HMAC-SHA256 of the raw body with the secret')
    t.equal(d.contentType, 'application/json')
  }
  await waitUntil('the cursor saved', async () => (await g.get(`webhooks/${hook.id}`)).json<Listed>().cursor === start + 5)
  t.match((await g.get(`webhooks/${hook.id}`)).json(), { cursor: start + 5, failingSince: null, suspended: false, lastError: null })
  t.equal((await g.delete(`webhooks/${hook.id}`)).status, 204)
})

t.test('delivery resumes after a restart from the persisted cursor', async (t) => {
  const g = graph()
  const receiver = await new Receiver().listen()
  t.teardown(() => receiver.close())
  const hook = await register(g, receiver.url)
  const start = await logEnd(g)
  for (let i = 0; i < 3; i++) t.equal((await g.put(`nodes/core/customer/restart-${i}`, {})).status, 204)
  await waitUntil('three delivered', () => receiver.accepted().length === 3)
  await waitUntil('the cursor saved', async () => (await g.get(`webhooks/${hook.id}`)).json<Listed>().cursor === start + 3)

  receiver.respond = () => 503
  for (let i = 3; i < 6; i++) t.equal((await g.put(`nodes/core/customer/restart-${i}`, {})).status, 204)
  await waitUntil('a failed attempt', () => receiver.deliveries.length > 3)
  const failing = (await g.get(`webhooks/${hook.id}`)).json<Listed>()
  t.equal(failing.cursor, start + 3, 'the cursor stays at the last accepted event')
  t.equal(failing.lastError, NOT_ACCEPTED, 'lastError says the endpoint did not accept, not its status')
  t.type(failing.failingSince, 'number')

  await env.server.stop()
  receiver.respond = () => 200
  await startService()
  const g2 = new Graph(env.server.url, 'demo', env.token, env.consent)
  await waitUntil('six accepted', () => receiver.accepted().length >= 6)
  await sleep(300)
  t.same(receiver.accepted().map(sequenceOf), [1, 2, 3, 4, 5, 6].map((i) => start + i), 'every event accepted once, in order, across the restart')
  t.same(receiver.accepted().map((d) => (JSON.parse(d.body) as { payload: { id: string } }).payload.id), [0, 1, 2, 3, 4, 5].map((i) => `restart-${i}`))
  await waitUntil('the cursor saved', async () => (await g2.get(`webhooks/${hook.id}`)).json<Listed>().cursor === start + 6)
  t.equal((await g2.delete(`webhooks/${hook.id}`)).status, 204)
})

t.test('retries back off exponentially; a day of failures suspends the webhook', async (t) => {
  const g = graph()
  const receiver = await new Receiver().listen()
  t.teardown(async () => {
    writeFileSync(env.clockFile, '0')
    await receiver.close()
  })
  receiver.respond = () => 500
  const hook = await register(g, receiver.url)
  t.equal((await g.put('nodes/core/customer/suspend-1', {})).status, 204)
  await waitUntil('five failed attempts', () => receiver.deliveries.length >= 5)
  const gaps = receiver.deliveries.slice(0, 5).map((d, i, all) => (i === 0 ? 0 : d.at - all[i - 1]!.at)).slice(1)
  t.comment(`gaps between attempts: ${gaps.join(', ')} ms`)
  gaps.forEach((gap, i) => t.ok(gap >= RETRY_BASE_MS * 2 ** i * 0.8, `retry ${i + 1} waited ${gap} ms, about ${RETRY_BASE_MS * 2 ** i}`))
  const failing = (await g.get(`webhooks/${hook.id}`)).json<Listed>()
  t.match(failing, { suspended: false, lastError: NOT_ACCEPTED })
  t.type(failing.failingSince, 'number')

  // A day later by the server's clock: the next failure suspends it.
  writeFileSync(env.clockFile, String(24 * 3_600_000 + 60_000))
  const token = await getToken(env.server.url)
  const g2 = new Graph(env.server.url, 'demo', token, env.consent)
  await waitUntil('suspended', async () => (await g2.get(`webhooks/${hook.id}`)).json<Listed>().suspended, 30_000)
  const suspended = (await g2.get(`webhooks/${hook.id}`)).json<Listed>()
  t.match(suspended, { suspended: true, failingSince: failing.failingSince, lastError: NOT_ACCEPTED })
  t.same((await g2.get('webhooks')).json<Listed[]>().find((h) => h.id === hook.id)?.suspended, true, 'visible in the list too')

  const attempts = receiver.deliveries.length
  receiver.respond = () => 200
  t.equal((await g2.put('nodes/core/customer/suspend-2', {})).status, 204)
  await sleep(1000)
  t.equal(receiver.deliveries.length, attempts, 'a suspended webhook gets nothing')
  t.equal((await g2.delete(`webhooks/${hook.id}`)).status, 204)
})
