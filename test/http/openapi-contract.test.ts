// The graph service against its own GET /openapi.json: every operation is
// called with a valid request, without a token, and with at least one other
// invalid request; each answer's status must be declared for the operation,
// with its headers, and its body must fit the schema declared for that
// status and media type. An operation of the document left out fails too.
import t from 'tap'
import { Contract, type Case, type Document } from '../helpers/openapi-contract'
import { call } from '../helpers/client'
import { getToken, serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
const PREFIX = '/graph/v1/{tenant}'

const NODE = 'nodes/{ns}/{type}/{id}'
const REL = 'relations/{fromNs}/{fromType}/{fromId}/{toNs}/{toType}/{toId}/{relNs}/{relType}/{relId}'
const COUNTER = 'counters/{fromNs}/{fromType}/{fromId}/{toNs}/{toType}/{toId}/{relNs}/{relType}/{relId}/{counter}'
const REL_TYPE = 'metamodel/relations/{fromNs}/{fromType}/{toNs}/{toType}/{relNs}/{relType}'
const JSON_TYPE = { 'content-type': 'application/json' }

t.test('every graph answer is one the document declares', async (t) => {
  const base = fixture.server.url
  const doc = JSON.parse((await call('GET', `${base}/openapi.json`)).text) as Document
  const contract = new Contract(doc)
  const G = `${base}/graph/v1/demo`
  const auth = { authorization: `Bearer ${fixture.token}` }
  const viewOnly = { authorization: `Bearer ${await getToken(base, 'platform.profile_graph_view')}` }
  const op = (method: string, path: string): string => `${method} ${PREFIX}/${path}`

  /** Sends, checks, and hands back the answer; `status` is what this request must get. */
  const check = (c: Case, status: number): Promise<{ status: number; text: string }> => contract.expect(t, c, status, ` (${c.url.slice(G.length)})`)
  /** The valid request, then the same without a token (401), and `invalid` ones with their statuses. */
  const both = async (c: Case, status: number, ...invalid: [Partial<Case>, number][]): Promise<{ status: number; text: string }> => {
    const answer = await check({ ...c, headers: { ...auth, ...c.headers } }, status)
    await check({ ...c, headers: c.headers ?? {} }, 401)
    for (const [change, bad] of invalid) await check({ ...c, headers: { ...auth, ...c.headers }, ...change }, bad)
    return answer
  }

  const created = await both({ op: op('POST', 'consents'), url: `${G}/consents`, headers: JSON_TYPE, body: '{"subject":"contract"}' }, 201,
    [{ body: '{}' }, 400], [{ headers: { ...auth, 'content-type': 'text/plain' } }, 415])
  const ref = (JSON.parse(created.text) as { consentReference: string }).consentReference
  const write = { ...JSON_TYPE, 'consent-reference': ref }
  const C = `${G}/consents/${ref}`
  await both({ op: op('GET', 'consents/{ref}'), url: C }, 200, [{ url: `${G}/consents/cr_none` }, 404])
  await both({ op: op('PUT', 'consents/{ref}/revokedProperties'), url: `${C}/revokedProperties`, headers: JSON_TYPE, body: '["email"]' }, 204,
    [{ body: '{"a":1}' }, 400])

  const N = `${G}/nodes/core/customer/c1`
  await both({ op: op('PUT', NODE), url: N, headers: { ...write, 'platform-context-trace-id': 'trace-1' }, body: '{"name":"Ada","age":36}' }, 204,
    [{ body: '[1]' }, 400], [{ body: '{"tid":1}' }, 400], [{ headers: { ...auth, ...JSON_TYPE, 'consent-reference': 'cr_unknown' } }, 403])
  await both({ op: op('HEAD', 'nodes/{ns}/{type}'), url: `${G}/nodes/core/customer` }, 200, [{ headers: viewOnly, url: `${G}/nodes/core/${'x'.repeat(65)}` }, 400])
  await both({ op: op('GET', 'nodes/{ns}/{type}'), url: `${G}/nodes/core/customer?limit=10` }, 200,
    [{ headers: { ...auth, accept: 'application/x-ndjson', 'consent-reference': ref } }, 200], [{ url: `${G}/nodes/core/customer?q=email:%22a%22` }, 400])
  await both({ op: op('GET', NODE), url: N }, 200, [{ url: `${G}/nodes/core/customer/none` }, 404])
  await both({ op: op('PUT', `${NODE}/{key}`), url: `${N}/age`, headers: write, body: '37' }, 204, [{ url: `${N}/id` }, 400])
  await both({ op: op('GET', `${NODE}/{key}`), url: `${N}/name` }, 200, [{ url: `${N}/nothing` }, 404])

  const R = `${G}/relations/core/customer/c1/core/product/p1/core/viewed/r1`
  await both({ op: op('PUT', REL), url: R, headers: write, body: '{"lastSeen":1}' }, 204, [{ body: '{"schema":1}' }, 400])
  await both({ op: op('GET', REL), url: R }, 200, [{ url: R.replace('/r1', '/none') }, 404])
  await both({ op: op('POST', COUNTER), url: `${G}/counters/core/customer/c1/core/product/p1/core/viewed/r1/views`, headers: { 'consent-reference': ref } }, 200,
    [{ url: `${G}/counters/core/customer/c1/core/product/p1/core/viewed/r1/undeclared x` }, 400])
  await both({ op: op('GET', 'neighbours/{ns}/{type}/{id}'), url: `${G}/neighbours/core/customer/c1` }, 200,
    [{ headers: { ...auth, accept: 'application/x-ndjson' } }, 200], [{ url: `${G}/neighbours/core/customer/none` }, 404])

  await both({ op: op('GET', 'events'), url: `${G}/events?after=0&limit=5` }, 200, [{ url: `${G}/events?after=x` }, 400])
  await both({ op: op('GET', 'events/stream'), url: `${G}/events/stream` }, 400)
  const hook = await both({ op: op('POST', 'webhooks'), url: `${G}/webhooks`, headers: JSON_TYPE, body: '{"url":"https://hooks.example.com/graph"}' }, 201,
    [{ body: '{"url":"ftp://x"}' }, 400], [{ headers: { ...viewOnly, ...JSON_TYPE } }, 403])
  const hookId = (JSON.parse(hook.text) as { id: string }).id
  await both({ op: op('GET', 'webhooks'), url: `${G}/webhooks` }, 200, [{ headers: viewOnly }, 403])
  await both({ op: op('GET', 'webhooks/{id}'), url: `${G}/webhooks/${hookId}` }, 200, [{ url: `${G}/webhooks/none` }, 404])
  await both({ op: op('DELETE', 'webhooks/{id}'), url: `${G}/webhooks/${hookId}` }, 204, [{ url: `${G}/webhooks/none` }, 404])

  await both({ op: op('GET', 'metamodel'), url: `${G}/metamodel` }, 200, [{ url: `${base}/graph/v1/acme/metamodel` }, 403])
  await both({ op: op('GET', 'metamodel/nodes/{ns}/{type}'), url: `${G}/metamodel/nodes/core/customer` }, 200, [{ url: `${G}/metamodel/nodes/core/none` }, 404])
  await both({ op: op('GET', REL_TYPE), url: `${G}/metamodel/relations/core/customer/core/product/core/viewed` }, 200,
    [{ url: `${G}/metamodel/relations/core/customer/core/product/core/none` }, 404])
  await both({ op: op('GET', 'export'), url: `${G}/export` }, 200, [{ headers: viewOnly }, 403])
  await both({ op: op('POST', 'import'), url: `${G}/import`, headers: JSON_TYPE, body: '[]' }, 200, [{ body: '{}' }, 400])
  const line = JSON.stringify({ method: 'PUT', path: 'nodes/core/product/tea', headers: { 'consent-reference': ref }, body: { title: 'Tea' } })
  await both({ op: op('POST', 'bulk'), url: `${G}/bulk`, headers: { 'content-type': 'application/x-ndjson' }, body: `${line}\n` }, 200,
    [{ headers: { ...auth, ...JSON_TYPE } }, 415], [{ url: `${G}/bulk?answers=none` }, 400])

  await both({ op: op('GET', 'consents'), url: `${G}/consents?subject=contract&limit=10` }, 200,
    [{ url: `${G}/consents` }, 400], [{ headers: viewOnly }, 403])
  await both({ op: op('GET', 'subject/export'), url: `${G}/subject/export?subject=contract` }, 200,
    [{ headers: { ...auth, accept: 'application/x-ndjson' } }, 200], [{ url: `${G}/subject/export?subject=` }, 400], [{ headers: viewOnly }, 403])

  await both({ op: op('DELETE', REL), url: R }, 204, [{ url: R.replace('/r1', `/${'r'.repeat(385)}`) }, 400])
  await both({ op: op('DELETE', NODE), url: N }, 204, [{ url: `${base}/graph/v1/acme/nodes/core/customer/c1` }, 403])
  await both({ op: op('DELETE', 'consents/{ref}'), url: C }, 204, [{ url: `${G}/consents/cr_none` }, 404])
  await both({ op: op('POST', 'consents/{ref}/grant'), url: `${C}/grant` }, 204, [{ url: `${G}/consents/cr_none/grant` }, 404])
  await both({ op: op('DELETE', 'subject'), url: `${G}/subject?subject=contract` }, 204, [{ url: `${G}/subject` }, 400], [{ headers: viewOnly }, 403])

  t.same(contract.missed(PREFIX), [], 'every graph operation of the document was exercised')
})
