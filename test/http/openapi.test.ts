// GET /openapi.json on the running server: the document of its own routes,
// for its PUBLIC_URL, without a token; like /errors, only GET answers. And
// the dispatcher's schema validation answers with the messages the routes
// always had (a check's own message, a schema's x-error-message).
import t from 'tap'
import { call } from '../helpers/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)
const url = (): string => fixture.server.url

t.test('GET /openapi.json is the OpenAPI 3.1 document of this server', async (t) => {
  const res = await call('GET', `${url()}/openapi.json`)
  t.equal(res.status, 200)
  t.match(res.headers['content-type'], /application\/json/)
  const doc = JSON.parse(res.text) as { openapi: string; servers: { url: string }[]; paths: Record<string, unknown> }
  t.equal(doc.openapi, '3.1.0')
  t.equal(doc.servers[0]?.url, url())
  t.ok(doc.paths['/graph/v1/{tenant}/nodes/{ns}/{type}/{id}'])
  t.ok(doc.paths['/oauth2/v1/token'])
  const post = await call('POST', `${url()}/openapi.json`)
  t.equal(post.status, 404, 'only GET, as /errors')
})

t.test('validated input keeps the messages of the routes', async (t) => {
  const auth = { authorization: `Bearer ${fixture.token}`, 'consent-reference': fixture.consent, 'content-type': 'application/json' }
  const long = await call('PUT', `${url()}/graph/v1/demo/nodes/core/customer/${'i'.repeat(385)}`, auth, '{}')
  t.equal(long.status, 400)
  t.match(long.text, /"message":"node id is longer than 384 bytes"/)
  const shape = await call('PUT', `${url()}/graph/v1/demo/nodes/core/customer/c1`, auth, '[1]')
  t.match(shape.text, /"message":"the request body must be a JSON object of properties"/)
  const reserved = await call('PUT', `${url()}/graph/v1/demo/nodes/core/customer/c1`, auth, '{"tid":1}')
  t.match(reserved.text, /"type":"validation_violation"/)
  t.match(reserved.text, /"tid\\" is a reserved property name and cannot be set/)
  const consent = await call('POST', `${url()}/graph/v1/demo/consents`, auth, '{"subject":"  "}')
  t.match(consent.text, /the body must be \{\\"subject\\"/)
})
