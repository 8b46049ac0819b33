// Webhooks are no way into the server's network: URLs
// naming loopback, private, link-local, unique-local, unspecified or metadata
// hosts in any spelling are refused at registration; a stored webhook whose
// address is no longer allowed gets nothing at delivery; lastError says only
// that delivery failed, the same for a closed port and an answering one.
import t from 'tap'
import { createServer, type Server as HttpServer } from 'node:http'
import { call, createConsent, Graph } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir, type Server } from '../helpers/server'
import { NOT_ACCEPTED, NOT_REACHED } from '../../src/events/webhook-delivery'
import { sleep, until } from '../../bench/wait'

const env = {} as { server: Server; dir: string; graph: Graph }
const json = { 'content-type': 'application/json' }

async function start(allow: string): Promise<void> {
  env.server = await startServer({ dataDir: env.dir, env: { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_ALLOW: allow } })
  const token = await getToken(env.server.url)
  const consent = env.graph?.consent ?? (await createConsent(env.server.url, 'demo', token, 'subject-1'))
  env.graph = new Graph(env.server.url, 'demo', token, consent)
}

t.before(async () => {
  env.dir = tempDir('webhooks-ssrf-')
  await start('127.0.0.1')
})
t.teardown(async () => {
  await env.server.stop()
  removeDir(env.dir)
})

const register = (url: string): ReturnType<typeof call> =>
  call('POST', env.graph.url('webhooks'), { authorization: `Bearer ${env.graph.token}`, ...json }, JSON.stringify({ url }))

interface Listed { id: string; lastError: string | null; failingSince: number | null }

const waitFor = (what: string, check: () => Promise<boolean>): Promise<number> => until(what, check, 15_000, 50)

async function receiver(status: number): Promise<{ http: HttpServer; url: string; hits: () => number }> {
  let hits = 0
  const http = createServer((req, res) => {
    hits++
    req.resume()
    res.writeHead(status).end()
  })
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
  const address = http.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  return { http, url: `http://127.0.0.1:${address.port}/hook`, hits: () => hits }
}

t.test('registration refuses internal and metadata hosts in every spelling', async (t) => {
  for (const url of [
    'http://127.0.0.2/', 'http://2130706434/', 'http://0x7f000002/', 'http://127.2/', 'http://[::ffff:127.0.0.2]/', 'http://[::1]/',
    'http://localhost/', 'http://localhost./', 'http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal/computeMetadata/v1/',
    'http://10.0.0.1/', 'http://192.168.0.1/', 'http://172.16.0.1/', 'http://100.64.0.1/', 'http://[fd00::1]/', 'http://[fe80::1]/',
    'http://0.0.0.0/', 'http://[::]/', 'https://[::ffff:a9fe:a9fe]/',
  ]) {
    const res = await register(url)
    t.equal(res.status, 400, url)
    t.match(res.json(), { type: 'bad_request', message: /public addresses only/ }, url)
  }
  t.same((await env.graph.get('webhooks')).json(), [], 'none was stored')
  t.equal((await register('https://hooks.example.com/x')).status, 201, 'a public host is fine')
  t.equal((await register('http://127.0.0.1:9/allowed')).status, 201, 'the operator allowed 127.0.0.1 (WEBHOOK_ALLOW)')
  for (const h of (await env.graph.get('webhooks')).json<Listed[]>()) t.equal((await env.graph.delete(`webhooks/${h.id}`)).status, 204)
})

t.test('lastError is the same for a closed port and for an answering one; a stored webhook no longer allowed gets nothing', async (t) => {
  const failing = await receiver(500)
  t.teardown(() => failing.http.close())
  const closedPort = await receiver(200)
  const closedUrl = closedPort.url
  await new Promise<void>((r) => closedPort.http.close(() => r()))
  const answering = (await register(failing.url)).json<{ id: string }>()
  const closed = (await register(closedUrl)).json<{ id: string }>()
  t.equal((await env.graph.put('nodes/core/customer/ssrf-1', {})).status, 204)
  const lastError = async (id: string): Promise<string | null> => (await env.graph.get(`webhooks/${id}`)).json<Listed>().lastError
  await waitFor('both failing', async () => (await lastError(answering.id)) !== null && (await lastError(closed.id)) !== null)
  t.equal(await lastError(answering.id), NOT_ACCEPTED, 'no HTTP status of the endpoint')
  t.equal(await lastError(closed.id), NOT_REACHED, 'no ECONNREFUSED or other detail')
  t.notMatch(await lastError(closed.id), /ECONN|127\.0\.0\.1|refused/i)

  // The operator withdraws the exception: the stored webhooks are refused at delivery, before connecting.
  await env.server.stop()
  await start('')
  const before = failing.hits()
  t.equal((await env.graph.put('nodes/core/customer/ssrf-2', {})).status, 204)
  await sleep(1500)
  t.equal(failing.hits(), before, 'no POST reached the loopback listener')
  t.equal(await lastError(answering.id), NOT_REACHED, 'a refused address reads like an unreachable one')
  t.match(env.server.output(), /not a public address/, 'the operator log says why')
})
