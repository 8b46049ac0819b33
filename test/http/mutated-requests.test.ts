// Mutated requests (a seeded generator: bodies, path segments, headers) never
// get a 5xx other than 503/507 and never stop the process; the same probes
// the black-box fuzzer runs, at a size a test can afford.
import t from 'tap'
import { request, type Dispatcher } from 'undici'
import { createConsent } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)

let seed = 20261123
const rnd = (): number => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}
const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!
const WEIRD = ['', '%', '\u0000', 'a'.repeat(3000), '..', '/', 'é', '😀', '-1', '99999999999999999999', 'null', '{}', '[]', ' ', 'P', '1e999', 'NaN', '99999999d']

function mutateJson(v: unknown): unknown {
  if (rnd() < 0.1) return pick<unknown>([null, true, 1e308, '', 'x'.repeat(5000), [], {}, [[[[]]]], { a: { b: { c: 1 } } }])
  if (Array.isArray(v)) return v.map(mutateJson)
  if (v !== null && typeof v === 'object') {
    const o: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) o[rnd() < 0.1 ? pick(WEIRD) : k] = mutateJson(x)
    if (rnd() < 0.2) o[pick(WEIRD)] = pick(WEIRD)
    return o
  }
  return rnd() < 0.2 ? pick(WEIRD) : v
}

function mutateString(s: string): string {
  const r = rnd()
  if (r < 0.3) return s
  if (r < 0.5) return pick(WEIRD)
  if (r < 0.7) {
    const i = Math.floor(rnd() * (s.length + 1))
    return s.slice(0, i) + pick(WEIRD) + s.slice(i)
  }
  return r < 0.85 ? s.slice(0, Math.floor(rnd() * s.length)) : s + s
}

/** A header value undici will send (it refuses other characters itself). */
const headerSafe = (s: string): string => s.replace(/[^\x20-\x7e]/g, '')

t.test('no mutated request gets a 5xx (other than 503/507) and the server lives', async (t) => {
  const { url } = fixture.server
  const token = fixture.token
  const consent = await createConsent(url, 'demo', token, 'fuzz')
  const templates: [Dispatcher.HttpMethod, string, unknown][] = [
    ['PUT', '/graph/v1/demo/nodes/core/customer/c1', { name: 'Ann', age: 3, email: 'a@b', extra: { x: [1, 2] } }],
    ['PUT', '/graph/v1/demo/nodes/core/customer/c1/properties/name', 'Bob'],
    ['PUT', '/graph/v1/demo/relations/core/customer/c1/core/product/p1/core/viewed/v1', { views: 1 }],
    ['POST', '/graph/v1/demo/counters/core/customer/c1/core/product/p1/core/viewed/v1/views', undefined],
    ['GET', '/graph/v1/demo/nodes/core/customer?q=name:"Ann"&limit=5', undefined],
    ['GET', '/graph/v1/demo/neighbours/core/customer/c1', undefined],
    ['POST', '/graph/v1/demo/consents', { subject: 'x' }],
    ['PUT', `/graph/v1/demo/consents/${consent}/revokedProperties`, ['email']],
    ['GET', '/graph/v1/demo/events?after=0&limit=5', undefined],
    ['DELETE', '/graph/v1/demo/nodes/core/customer/c9', undefined],
    ['POST', '/oauth2/v1/token', { form: { grant_type: 'password', username: 'alice', password: 'secret12', client_id: 'demo-enricher' } }],
    ['POST', '/oauth2/v1/revoke', { form: { token: 'abc', token_type_hint: 'access_token' } }],
  ]
  const HEADERS = ['platform-schedule-event-at', 'platform-decay-at', 'platform-context-trace-id', 'consent-reference', 'content-type']
  const bad: string[] = []
  const one = async (): Promise<void> => {
    const [method, path, template] = pick(templates)
    const segments = path.split('/')
    const at = 1 + Math.floor(rnd() * (segments.length - 1))
    const mutatedPath = rnd() < 0.4 ? segments.map((s, j) => (j === at ? encodeURIComponent(mutateString(s).replace(/[\ud800-\udfff]/g, '')) : s)).join('/') : path
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'consent-reference': consent }
    if (rnd() < 0.5) headers[pick(HEADERS)] = headerSafe(mutateString(pick(['1h', '2026-12-01T10:00:00Z', consent, 'application/json'])))
    let body: string | undefined
    const form = (template as { form?: Record<string, string> } | undefined)?.form
    if (form !== undefined) {
      const fields = (rnd() < 0.7 ? mutateJson(form) : form) as Record<string, unknown>
      body = new URLSearchParams(Object.entries(fields ?? {}).map(([k, v]): [string, string] => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
      headers['content-type'] = 'application/x-www-form-urlencoded'
    } else if (template !== undefined) {
      body = JSON.stringify(rnd() < 0.7 ? mutateJson(template) : template)
      if (rnd() < 0.1) body = body.slice(0, Math.floor(rnd() * body.length))
    }
    const res = await request(`${url}${mutatedPath}`, { method, headers, body })
    const text = await res.body.text()
    if (res.statusCode >= 500 && res.statusCode !== 503 && res.statusCode !== 507) bad.push(`${res.statusCode} ${method} ${mutatedPath}: ${text.slice(0, 200)}`)
  }
  for (let n = 0; n < 1600; n += 16) await Promise.all(Array.from({ length: 16 }, one))
  t.same(bad, [], 'no 5xx')
  t.equal(fixture.server.proc.exitCode, null, 'the server lives')
  t.equal((await request(`${url}/errors`)).statusCode, 200)
})
