// Hostile traffic cannot grow /metrics: thousands of random requests (paths,
// methods, headers, bodies) leave the request series under a fixed bound,
// because every label value comes from a fixed set (src/telemetry/metrics.ts).
import t from 'tap'
import { request } from 'undici'
import { pool } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
const REQUESTS = 3000
/**
 * What the labels allow for the requests below: about 60 route labels,
 * each with the methods it serves plus OTHER (405s), times the statuses a
 * route answers with: about 1,400 here. (A status of its own for every
 * code a service behind the gateway answers with had no bound at all.)
 */
const MAX_REQUEST_SERIES = 2500

/** A deterministic generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let x = seed
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648
    return x / 2147483648
  }
}
const rnd = random(42)
const pick = <T>(items: readonly T[]): T => items[Math.floor(rnd() * items.length)]!
const word = (): string => Math.floor(rnd() * 1e9).toString(36)

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'PURGE', 'BREW', 'X-METHOD', 'LOCK', 'SEARCH']
const ROOTS = [
  '/graph/v1/demo/nodes/core/customer', '/graph/v1/demo/nodes/core/customer/c1', '/graph/v1/demo/relations', '/graph/v1/demo/events', '/graph/v1/demo/consents',
  '/graph/v1/demo/nodes/core/customer/c1/neighbours', '/graph/v1/other/nodes', '/oauth2/v1/token', '/oauth2/v1/userinfo', '/oauth2/v1/introspect', '/oauth2/v1/revoke',
  '/oauth2/v1/authorize', '/oauth2/v1/admin/clients', '/oauth2/v1/admin/users', '/oauth2/v1/.well-known/openid-configuration', '/.well-known/oauth-authorization-server',
  '/gateway/pkg/svc', '/errors', '/openapi.json', '/health/live', '/metrics', '',
]
const TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', '']

async function hostileRequest(): Promise<void> {
  const path = `${pick(ROOTS)}${rnd() < 0.6 ? `/${word()}` : ''}${rnd() < 0.3 ? `/%${word()}` : ''}${rnd() < 0.3 ? `?${word()}=${word()}` : ''}`
  const headers: Record<string, string> = { [`x-${word()}`]: word() }
  const type = pick(TYPES)
  if (type !== '') headers['content-type'] = type
  if (rnd() < 0.5) headers.authorization = pick([`Bearer ${word()}`, `Basic ${word()}`, word(), `Bearer ${fixture.token}`])
  if (rnd() < 0.3) headers.origin = `https://${word()}.example`
  if (rnd() < 0.2) headers['consent-reference'] = word()
  const method = pick(METHODS)
  const body = method !== 'GET' && method !== 'HEAD' && rnd() < 0.5 ? pick(['{', '{}', '[1,2', 'a=b&c', word().repeat(100)]) : undefined
  try {
    const res = await request(`${fixture.server.url}${path || '/'}`, { method, headers, body })
    await res.body.dump()
  } catch {
    // A request refused at the HTTP layer (the library's own 4xx page, a closed connection) counts as sent.
  }
}

t.test(`${REQUESTS} hostile requests: the request series stay under ${MAX_REQUEST_SERIES}`, async (t) => {
  await pool(REQUESTS, 16, hostileRequest)
  const scrape = await (await request(`${fixture.server.url}/metrics`)).body.text()
  // The samples of http_requests_total and of the latency histogram.
  const series = scrape.split('\n').filter((line) => line.startsWith('http_request')).length
  t.ok(series < MAX_REQUEST_SERIES, `${series} request series`)
  t.ok(scrape.length < 500_000, `the scrape stays small (${scrape.length} bytes)`)
})
