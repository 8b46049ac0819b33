// GET /openapi.json's document: a valid OpenAPI 3.1 document (checked with a
// standard validator), listing every route the routers know, with every
// example fitting its schema.
import t from 'tap'
import Ajv2020 from 'ajv/dist/2020'
import { Validator } from '@seriousme/openapi-schema-validator'
import { API, EXTRAS } from '../../../src/app/openapi'
import { Router } from '../../../src/http/router'
import { CHECK, ERROR_MESSAGE } from '../../../src/http/schemas'

interface Doc {
  paths: Record<string, Record<string, unknown>>
  components: { securitySchemes: Record<string, { scheme: string }>; schemas: { Error: { required: string[] } } }
}
const doc = JSON.parse(API.document('https://graph.example.com')) as Doc

t.test('the document is valid OpenAPI 3.1', async (t) => {
  const result = await new Validator().validate(doc as unknown as Record<string, unknown>)
  t.same(result.errors ?? [], [], 'no errors')
  t.equal(result.valid, true)
})

t.test('every route the routers know is in the document', async (t) => {
  const listed = new Set(Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)))
  const known = [
    ...new Router(API.graph, API.schemas, { emptyCaptures: true }).routes.map((r) => ['/graph/v1/{tenant}', r] as const),
    ...new Router(API.oauth, API.schemas, { emptyCaptures: false }).routes.map((r) => ['/oauth2/v1', r] as const),
  ].flatMap(([prefix, r]) => Object.keys(r.methods).map((m) => `${m} ${prefix}/${r.pattern.replace(/:([^/]+)/g, '{$1}')}`))
  t.ok(known.length > 50, `${known.length} routes`)
  for (const route of known) t.ok(listed.has(route), route)
  for (const extra of EXTRAS) t.ok(listed.has(`${extra.method} ${extra.path}`), `${extra.method} ${extra.path}`)
  t.equal(listed.size, known.length + EXTRAS.length, 'and nothing else')
  for (const needed of ['POST /oauth2/v1/token', 'GET /oauth2/v1/.well-known/openid-configuration', 'GET /oauth2/v1/authorize', 'PUT /graph/v1/{tenant}/nodes/{ns}/{type}/{id}', 'GET /oauth2/v1/admin/users/{id}']) {
    t.ok(listed.has(needed), `lists ${needed}`)
  }
})

/** Every (schema, example) pair: schemas with an `example`, and media types and parameters with one. */
function examples(node: unknown, path: string, out: { path: string; schema: object; example: unknown }[]): typeof out {
  if (typeof node !== 'object' || node === null) return out
  const o = node as Record<string, unknown>
  if (o.example !== undefined && typeof o.schema === 'object' && o.schema !== null) out.push({ path, schema: o.schema, example: o.example })
  if (o.example !== undefined && (typeof o.type === 'string' || o.anyOf !== undefined)) out.push({ path, schema: o, example: o.example })
  for (const [k, v] of Object.entries(o)) examples(v, `${path}/${k}`, out)
  return out
}

t.test('every example fits its schema', async (t) => {
  const ajv = new Ajv2020({ strict: false })
  ajv.addKeyword({ keyword: CHECK })
  ajv.addKeyword({ keyword: ERROR_MESSAGE })
  const pairs = examples(doc, '', [])
  t.ok(pairs.length >= 10, `${pairs.length} examples`)
  for (const { path, schema, example } of pairs) {
    const resolved = JSON.parse(JSON.stringify(schema).replace('"#/components/schemas/Error"', '"#/$defs/Error"')) as object
    const fits = ajv.compile({ ...resolved, $defs: { Error: doc.components.schemas.Error } })
    t.ok(fits(example), `${path}: ${JSON.stringify(fits.errors ?? [])}`)
  }
})

t.test('the document names the security schemes and the error shape', async (t) => {
  const d = doc
  t.equal(d.components.securitySchemes.bearer?.scheme, 'bearer')
  t.equal(d.components.securitySchemes.clientBasic?.scheme, 'basic')
  t.same(d.components.schemas.Error.required, ['status', 'message', 'type', 'moreInfo'])
})
