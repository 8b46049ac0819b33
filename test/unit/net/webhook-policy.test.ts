// The webhook policy and its connector: URLs refused at registration by
// their host alone, and connections refused by the address they would reach
// (after DNS, so a public-looking name that resolves to loopback is refused).
import t from 'tap'
import { createServer, type Server } from 'node:http'
import { request } from 'undici'
import { guardedAgent } from '../../../src/events/webhook-connector'
import { AddressRefused, invalidAllowEntry, WebhookPolicy, type Resolve } from '../../../src/net/webhook-policy'

const url = (u: string): URL => new URL(u)

t.test('registration: non-public hosts in every spelling are refused unless allowed', async (t) => {
  const policy = new WebhookPolicy([])
  for (const u of [
    'http://127.0.0.1/', 'http://2130706433/', 'http://0x7f000001/', 'http://127.1/', 'http://[::ffff:127.0.0.1]/', 'http://localhost:8080/',
    'http://LOCALHOST./', 'http://app.localhost/', 'http://169.254.169.254/latest/meta-data', 'http://metadata.google.internal/',
    'http://10.0.0.1/', 'http://192.168.0.1/', 'http://[fd00::1]/', 'http://[::]/', 'http://0.0.0.0/', 'https://[::1]:443/',
  ]) {
    t.type(policy.refusal(url(u)), 'string', u)
  }
  for (const u of ['https://hooks.example.com/a', 'http://93.184.216.34/', 'https://[2606:4700::1111]/']) t.equal(policy.refusal(url(u)), undefined, u)
  const allowing = new WebhookPolicy(['127.0.0.1', '10.1.0.0/16', 'localhost', '*.corp.example'])
  for (const u of ['http://127.0.0.1:9/', 'http://10.1.2.3/', 'http://localhost/', 'http://hooks.corp.example/']) t.equal(allowing.refusal(url(u)), undefined, u)
  t.type(allowing.refusal(url('http://10.2.0.1/')), 'string', 'outside the allowed range')
  t.type(allowing.refusal(url('http://127.0.0.2/')), 'string', 'only the allowed address')
})

t.test('allow-list entries', async (t) => {
  for (const ok of ['127.0.0.1', '10.0.0.0/8', 'fd00::/8', 'hooks.internal', '*.corp.example', 'localhost']) t.equal(invalidAllowEntry(ok), undefined, ok)
  for (const bad of ['10.0.0.0/40', 'http://x', 'a b', '*', 'fd00::/200', '']) t.type(invalidAllowEntry(bad), 'string', bad)
})

t.test('delivery: the address after DNS decides', async (t) => {
  const answers: Record<string, string[]> = {
    'rebind.example': ['127.0.0.1'], 'mixed.example': ['10.0.0.1', '93.184.216.34'], 'public.example': ['93.184.216.34'], 'hooks.internal': ['10.9.9.9'],
  }
  const resolve: Resolve = async (host) => (answers[host] ?? []).map((address) => ({ address }))
  const policy = new WebhookPolicy(['hooks.internal'], resolve)
  await t.rejects(policy.address('rebind.example'), { code: 'ADDRESS_REFUSED' }, 'a public name that resolves to loopback')
  await t.rejects(policy.address('metadata.google.internal'), { code: 'ADDRESS_REFUSED' }, 'metadata by name, before any DNS')
  await t.rejects(policy.address('unknown.example'), { code: 'ADDRESS_REFUSED' }, 'no answer')
  t.equal(await policy.address('mixed.example'), '93.184.216.34', 'only an allowed answer is used')
  t.equal(await policy.address('public.example'), '93.184.216.34')
  t.equal(await policy.address('hooks.internal'), '10.9.9.9', 'an allowed name may resolve anywhere')
})

async function listen(handler: (path: string) => { status: number; headers?: Record<string, string> }): Promise<{ server: Server; port: number; hits: string[] }> {
  const hits: string[] = []
  const server = createServer((req, res) => {
    hits.push(req.url ?? '')
    const { status, headers } = handler(req.url ?? '')
    req.resume()
    res.writeHead(status, headers).end()
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no address')
  return { server, port: address.port, hits }
}

t.test('the guarded agent connects only where allowed and follows no redirect', async (t) => {
  const target = await listen(() => ({ status: 200 }))
  const redirector = await listen(() => ({ status: 302, headers: { location: `http://127.0.0.1:${target.port}/moved` } }))
  t.teardown(() => {
    target.server.close()
    redirector.server.close()
  })
  const denied = guardedAgent(new WebhookPolicy([], async () => [{ address: '127.0.0.1' }]), 2000)
  const allowed = guardedAgent(new WebhookPolicy(['127.0.0.1']), 2000)
  t.teardown(async () => {
    await denied.close()
    await allowed.close()
  })
  for (const u of [`http://127.0.0.1:${target.port}/`, `http://[::ffff:127.0.0.1]:${target.port}/`, `http://rebind.example:${target.port}/`]) {
    const err = await request(u, { method: 'POST', body: '{}', dispatcher: denied }).then(() => undefined, (e: unknown) => e)
    t.ok(err instanceof AddressRefused, `${u} refused before connecting`)
  }
  t.same(target.hits, [], 'nothing reached the listener')

  const res = await request(`http://127.0.0.1:${target.port}/hook`, { method: 'POST', body: '{}', dispatcher: allowed })
  await res.body.dump()
  t.equal(res.statusCode, 200, 'an allowed address is reached')
  const moved = await request(`http://127.0.0.1:${redirector.port}/hook`, { method: 'POST', body: '{}', dispatcher: allowed })
  await moved.body.dump()
  t.equal(moved.statusCode, 302, 'a redirect is an answer, not followed')
  t.same(target.hits, ['/hook'], 'the redirect target got nothing')
})

t.test('a DNS answer that never comes fails the connection after the timeout', async (t) => {
  const hanging = new WebhookPolicy([], () => new Promise(() => undefined))
  const agent = guardedAgent(hanging, 200)
  t.teardown(() => agent.close())
  const err = await request('http://slow-dns.example/', { method: 'POST', body: '{}', dispatcher: agent }).then(() => undefined, (e: unknown) => e)
  t.match(err, { message: /resolving slow-dns.example timed out/ })
})
