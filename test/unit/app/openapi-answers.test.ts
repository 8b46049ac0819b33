// Every operation of GET /openapi.json says what it answers: each success
// with a body has content with a schema (only 204, redirects, HEAD and the
// WebSocket upgrade have none), every error status carries the shared error
// body, and openapi-typescript generates types from the document.
import t from 'tap'
import { API } from '../../../src/app/openapi'

interface Response { content?: Record<string, { schema?: unknown }>; headers?: Record<string, unknown> }
interface Operation { operationId: string; responses: Record<string, Response> }
const doc = JSON.parse(API.document('https://graph.example.com')) as { paths: Record<string, Record<string, Operation>> }
const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, method, op })))

/** Successes that carry no body by nature (and the revocation's empty 200, RFC 7009). */
const bodiless = (name: string, method: string, status: number): boolean =>
  method === 'head' || status === 101 || status === 204 || (status >= 300 && status < 400) || name === 'POST /oauth2/v1/revoke'

t.test('every success declares its body, unless it has none by nature', async (t) => {
  t.ok(operations.length > 80, `${operations.length} operations`)
  for (const { name, method, op } of operations) {
    const successes = Object.entries(op.responses).filter(([s]) => Number(s) < 400)
    t.ok(successes.length > 0, `${name}: a success`)
    t.notOk('default' in op.responses, `${name}: no catch-all`)
    for (const [status, response] of successes) {
      const schemas = Object.values(response.content ?? {}).map((m) => m.schema)
      if (schemas.length === 0) t.ok(bodiless(name, method, Number(status)), `${name} ${status}: no body`)
      else t.ok(schemas.every((s) => typeof s === 'object' && s !== null), `${name} ${status}: a schema per media type`)
    }
  }
})

t.test('every error status carries the shared error body', async (t) => {
  for (const { name, op } of operations.filter((o) => o.name.includes('/graph/v1/') || o.name.includes('/oauth2/v1/'))) {
    const errors = Object.entries(op.responses).filter(([s]) => Number(s) >= 400)
    t.ok(errors.some(([s]) => s === '500'), `${name}: 500`)
    for (const [status, response] of errors) {
      t.same(response.content?.['application/json']?.schema, { $ref: '#/components/schemas/Error' }, `${name} ${status}`)
    }
  }
})

t.test('graph writes declare consent-reference; reads of the list may send it', async (t) => {
  const header = (name: string, path: string, method: string): { required?: boolean } | undefined =>
    ((doc.paths[path]?.[method] as unknown as { parameters: { name: string; in: string; required?: boolean }[] }).parameters).find((p) => p.in === 'header' && p.name === name)
  const node = '/graph/v1/{tenant}/nodes/{ns}/{type}/{id}'
  t.equal(header('consent-reference', node, 'put')?.required, true)
  t.equal(header('consent-reference', `${node}/{key}`, 'put')?.required, true)
  t.equal(header('consent-reference', '/graph/v1/{tenant}/nodes/{ns}/{type}', 'get')?.required, false)
  t.ok(header('platform-schedule-event-at', node, 'put'))
  t.ok(header('platform-context-trace-id', node, 'delete'))
  t.equal(header('consent-reference', node, 'get'), undefined, 'a read needs none')
  t.ok(doc.paths[node]?.put?.responses['204'], 'PUT node is a 204')
  t.notOk(doc.paths[node]?.put?.responses['200'])
  t.ok(doc.paths['/graph/v1/{tenant}/consents/{ref}/grant']?.post?.responses['204'])
  t.ok(doc.paths['/graph/v1/{tenant}/consents/{ref}/revokedProperties']?.put?.responses['204'])
  t.ok(doc.paths['/oauth2/v1/admin/tenants']?.post?.responses['201'])
})

t.test('openapi-typescript generates a type for every success body', async (t) => {
  // openapi-typescript is an ES module.
  const { default: openapiTS, astToString } = await (new Function('m', 'return import(m)') as (m: string) => Promise<typeof import('openapi-typescript')>)('openapi-typescript')
  const source = astToString(await openapiTS(doc as never))
  t.ok(source.length > 10_000, 'types generated')
  for (const { op } of operations) t.ok(source.includes(`${op.operationId}: {`), `${op.operationId} has its type`)
})
