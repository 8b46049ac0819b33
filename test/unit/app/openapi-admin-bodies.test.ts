// Every JSON body of the admin API is in GET /openapi.json with the schema
// its handler checks it against (an object with its fields), not the bare
// "any JSON" of a route that declares none.
import t from 'tap'
import { API } from '../../../src/app/openapi'

interface Operation { requestBody?: { content: Record<string, { schema: { type?: unknown; properties?: Record<string, unknown> } }> } }
const doc = JSON.parse(API.document('https://graph.example.com')) as { paths: Record<string, Record<string, Operation>> }

const bodies = Object.entries(doc.paths)
  .filter(([path]) => path.startsWith('/oauth2/v1/admin/'))
  .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op.requestBody?.content['application/json']?.schema] as const))
  .filter(([, schema]) => schema !== undefined)

t.ok(bodies.length >= 10, `${bodies.length} admin JSON bodies`)
for (const [route, schema] of bodies) {
  t.equal(schema?.type, 'object', `${route}: an object`)
  t.ok(Object.keys(schema?.properties ?? {}).length > 0, `${route}: its fields`)
}
const provider = bodies.find(([route]) => route === 'PUT /oauth2/v1/admin/identity-providers/{id}')?.[1]
t.ok(provider?.properties?.issuer !== undefined, 'the identity provider body is documented')
