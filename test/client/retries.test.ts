// Retries against a fake upstream: idempotent calls (GET, PUT, DELETE) wait
// the Retry-After of a 429, 503 or 507 and try again; a POST (a counter) is
// sent once and its error thrown; a wait longer than the client allows is
// not waited for.
import t from 'tap'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ProfileGraphClient, isProfileGraphError } from '@profile-graph/client'

interface Seen { method: string; url: string; at: number; consent: string | undefined }

/** A fake graph service: answers each request with the next of `answers` (the last one repeats). */
async function fakeService(t: { teardown(fn: () => Promise<void>): void }, answers: { status: number; retryAfter?: string; body?: string }[]): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = []
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume()
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', at: Date.now(), consent: req.headers['consent-reference'] as string | undefined })
      const a = answers[Math.min(seen.length - 1, answers.length - 1)]!
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (a.retryAfter !== undefined) headers['retry-after'] = a.retryAfter
      const body = a.body ?? (a.status >= 400
        ? JSON.stringify({ status: a.status, message: `answer ${a.status}`, type: a.status === 429 ? 'too_many_requests' : a.status === 507 ? 'insufficient_storage' : 'service_unavailable', moreInfo: 'http://fake/errors' })
        : '')
      res.writeHead(a.status, headers).end(a.status === 204 ? undefined : body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const node = { ns: 'core', type: 'customer', id: 'c1' }
const relation = { from: node, to: { ns: 'core', type: 'product', id: 'p1' }, rel: { ns: 'core', type: 'viewed', id: 'v1' } }
const client = (url: string, retries?: number): ProfileGraphClient =>
  new ProfileGraphClient({ baseUrl: url, tenant: 'demo', token: 'a-token', retry: { retries, maxDelayMs: 5_000, baseDelayMs: 50 } })

for (const status of [429, 503, 507]) {
  t.test(`a PUT answered ${status} with Retry-After is sent again after that wait`, async (t) => {
    const fake = await fakeService(t, [{ status, retryAfter: '1' }, { status: 204 }])
    await client(fake.url).putNode(node, { name: 'Ann' }, 'cr_1')
    t.equal(fake.seen.length, 2, 'sent twice')
    t.ok(fake.seen[1]!.at - fake.seen[0]!.at >= 950, `after the second Retry-After named (${fake.seen[1]!.at - fake.seen[0]!.at} ms)`)
    t.same(fake.seen.map((s) => s.consent), ['cr_1', 'cr_1'], 'both with the consent reference')
  })
}

t.test('GET and DELETE are retried too, as often as allowed, then the error is thrown', async (t) => {
  const fake = await fakeService(t, [{ status: 503, retryAfter: '0' }, { status: 200, body: '{"id":"c1"}' }])
  t.same(await client(fake.url).getNode(node), { id: 'c1' })
  t.same(fake.seen.map((s) => s.method), ['GET', 'GET'])

  const busy = await fakeService(t, [{ status: 503, retryAfter: '0' }])
  const error = await client(busy.url, 2).deleteNode(node).catch((e: unknown) => e)
  t.ok(isProfileGraphError(error, 'service_unavailable'), 'the last answer as a typed error')
  t.equal((error as { retryAfter: number }).retryAfter, 0)
  t.equal(busy.seen.length, 3, 'the first attempt and two retries')

  const noHeader = await fakeService(t, [{ status: 429 }, { status: 204 }])
  await client(noHeader.url).deleteNode(node)
  t.equal(noHeader.seen.length, 2, 'without Retry-After, after a short wait of its own')
})

t.test('a POST counter is never retried', async (t) => {
  const fake = await fakeService(t, [{ status: 503, retryAfter: '0' }, { status: 200, body: '{"views":1}' }])
  const error = await client(fake.url).incrementCounter(relation, 'views', 'cr_1').catch((e: unknown) => e)
  t.ok(isProfileGraphError(error, 'service_unavailable'))
  t.equal((error as { status: number }).status, 503)
  t.equal(fake.seen.length, 1, 'sent once')
  t.equal(fake.seen[0]!.consent, 'cr_1')
})

t.test('a Retry-After longer than the client waits is thrown at once; other errors are not retried', async (t) => {
  const fake = await fakeService(t, [{ status: 503, retryAfter: '120' }, { status: 204 }])
  const started = Date.now()
  const error = await client(fake.url).putNode(node, {}, 'cr_1').catch((e: unknown) => e)
  t.ok(isProfileGraphError(error, 'service_unavailable'))
  t.equal((error as { retryAfter: number }).retryAfter, 120, 'the wait it named')
  t.ok(Date.now() - started < 2_000, 'not waited for')
  t.equal(fake.seen.length, 1)

  const date = new Date(Date.now() + 1_000).toUTCString()
  const dated = await fakeService(t, [{ status: 503, retryAfter: date }, { status: 204 }])
  await client(dated.url).putNode(node, {}, 'cr_1')
  t.equal(dated.seen.length, 2, 'a Retry-After date is waited for too')

  const refused = await fakeService(t, [{ status: 500 }, { status: 204 }])
  t.ok(isProfileGraphError(await client(refused.url).putNode(node, {}, 'cr_1').catch((e: unknown) => e)), 'a 500 is thrown')
  t.equal(refused.seen.length, 1, 'not retried')

  const broken = await fakeService(t, [{ status: 502, body: '<html>bad gateway</html>' }])
  const bad = await client(broken.url).getNode(node).catch((e: unknown) => e)
  t.ok(isProfileGraphError(bad, 'bad_answer'), 'an answer that is not the error body')
  t.equal((bad as { status: number }).status, 502)
})
