// Subscription events (authorization spec, section 6) on the shared event
// machinery: created and cancelled through the admin API, read at
// GET /oauth2/v1/events with platform.admin, in v3 and the deprecated shapes.
import t from 'tap'
import { call } from '../helpers/client'
import { adminToken, clientToken, oauthServerForFile } from '../helpers/oauth'

const env = oauthServerForFile(t)
type Json = Record<string, unknown>
interface Page { events: { id: string; sequence: number; operation: string; schema: string; payload: Json; time: number }[]; next: number }

t.test('subscriptionCreated_v3 and subscriptionCancelled_v1 with metadata.schema', async (t) => {
  const admin = await adminToken(env.issuer)
  const auth = { authorization: `Bearer ${admin}` }
  const created = await call('POST', `${env.issuer}/admin/subscriptions`, { ...auth, 'content-type': 'application/json' },
    JSON.stringify({ id: 'globex-graph', tenant: 'globex', package: 'profile-graph' }))
  t.equal(created.status, 201)
  const first = (await call('GET', `${env.issuer}/events?after=0&wait=5`, auth)).json<Page>()
  const ev = first.events.find((e) => e.operation === 'subscriptionCreated')!
  t.equal(ev.schema, 'subscriptionCreated_v3')
  t.equal((ev.payload.metadata as Json).schema, 'subscriptionCreated_v3')
  t.match(ev.payload, {
    id: 'globex-graph',
    subscriber: { id: 'globex', org: 'globex-org' },
    package: { id: 'profile-graph', provider: { id: 'demo', org: 'demo-org' } },
  })
  t.ok(Array.isArray((ev.payload.package as Json).includedServices))
  t.match(ev.payload.validFrom, /^\d{4}-\d{2}-\d{2}T.*(Z|[+-]\d{2}:\d{2})$/)
  t.type(ev.sequence, 'number')

  const v2 = (await call('GET', `${env.issuer}/events?after=0&schema=subscriptionCreated_v2`, auth)).json<Page>()
  const e2 = v2.events.find((e) => e.operation === 'subscriptionCreated')!
  t.same([e2.schema, e2.payload.subscriber, (e2.payload.metadata as Json).schema], ['subscriptionCreated_v2', 'globex', 'subscriptionCreated_v2'])
  const v1 = (await call('GET', `${env.issuer}/events?after=0&schema=subscriptionCreated_v1`, auth)).json<Page>()
  const e1 = v1.events.find((e) => e.operation === 'subscriptionCreated')!
  t.same(Object.keys(e1.payload).sort(), ['id', 'metadata', 'package', 'subscriber'])
  t.same(e1.payload.subscriber, { id: 'globex' })
  t.same(Object.keys(e1.payload.package as Json).sort(), ['includedServices', 'provider'])

  t.equal((await call('DELETE', `${env.issuer}/admin/subscriptions/globex-graph`, auth)).status, 204)
  const next = (await call('GET', `${env.issuer}/events?after=${first.next}&wait=5`, auth)).json<Page>()
  const cancelled = next.events.find((e) => e.operation === 'subscriptionCancelled')!
  t.equal(cancelled.schema, 'subscriptionCancelled_v1')
  t.match(cancelled.payload, { id: 'globex-graph', subscriber: { id: 'globex' }, metadata: { schema: 'subscriptionCancelled_v1' } })
  t.type(cancelled.payload.validUntil, 'string')

  t.equal((await call('GET', `${env.issuer}/events?schema=v9`, auth)).status, 400)
})

t.test('only platform.admin reads them, and no tenant path reaches their log', async (t) => {
  const tenantToken = await clientToken(env.issuer, 'demo-enricher', 'demo-secret')
  t.equal((await call('GET', `${env.issuer}/events`, { authorization: `Bearer ${tenantToken}` })).status, 403)
  t.equal((await call('GET', `${env.issuer}/events`)).status, 401)
  const res = await call('GET', `${env.server.url}/graph/v1/${encodeURIComponent('@platform.authorization')}/events`, { authorization: `Bearer ${tenantToken}` })
  t.equal(res.status, 400)
})
