// The pure parts of health, metrics labels and logs: readiness names each
// failing check, route templates and audit actions, request ids, the
// webhook lag's event time, and the two options.
import t from 'tap'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import type { AccessTokenRecord, AuthStore } from '../../../src/auth/models/auth-store'
import { loadConfig } from '../../../src/config/load-config'
import { eventAgeMs } from '../../../src/events/webhook-delivery'
import { requestIdOf } from '../../../src/telemetry/request-id'
import { GRAPH_ROUTES } from '../../../src/graph/routes'
import { failing, readiness } from '../../../src/operations/health'
import { adminAudit, graphAudit, graphTemplate } from '../../../src/operations/request-labels'
import type { ActorPool } from '../../../src/shards/actor-pool'

const token = { client: 'c1', sub: 'u1', tenant: 'demo', scopes: [], exp: 0 } as AccessTokenRecord

t.test('readiness names every failing check and why', async (t) => {
  const pool = { actorsDown: () => ['actor 1: this shard is damaged'] } as unknown as ActorPool
  const closed = { env: { getStats: () => { throw new Error('the environment is closed') } } } as unknown as AuthStore
  const checks = readiness({ pool, authStore: closed, dataDir: join(tmpdir(), 'no-such-dir', 'data') })
  t.same(failing(checks), ['actors', 'authStore', 'dataDir'])
  t.match(checks.actors, /actor 1: this shard is damaged/)
  t.match(checks.authStore, /cannot be read: the environment is closed/)
  t.match(checks.dataDir, /not writable/)
  const fine = readiness({ pool: { actorsDown: () => [] } as unknown as ActorPool, authStore: { env: { getStats: () => ({}) } } as unknown as AuthStore, dataDir: tmpdir() })
  t.same(failing(fine), [])
})

t.test('route templates name the route, never the values', async (t) => {
  const templates = GRAPH_ROUTES.map(([pattern]) => graphTemplate(pattern))
  t.ok(templates.includes('/graph/v1/:tenant/nodes/:ns/:type/:id'))
  t.ok(templates.includes('/graph/v1/:tenant/consents/:ref/grant'))
  t.ok(templates.includes('/graph/v1/:tenant/metamodel/nodes/:ns/:type'))
  t.equal(new Set(templates.map((tpl, i) => `${tpl} ${Object.keys(GRAPH_ROUTES[i]![1]).join()}`)).size, templates.length, 'no two routes share a template and methods')
})

t.test('audit actions of admin and consent changes', async (t) => {
  t.same(adminAudit('admin/clients/:id', 'PUT', { id: 'app' }, token), { action: 'admin.clients.update', who: { client: 'c1', subject: 'u1' }, what: { ids: ['app'] } })
  t.equal(adminAudit('admin/clients/:id', 'GET', { id: 'app' }, token), undefined, 'reads are not audited')
  t.equal(adminAudit('admin/signing-keys', 'POST', {}, token)?.action, 'signing_key.rotate')
  t.equal(adminAudit('admin/clients/:id/secret', 'POST', { id: 'app' }, token)?.action, 'admin.clients.secret.rotate')
  t.equal(graphAudit('consents', 'POST', 'demo', token)?.action, 'consent.create')
  t.equal(graphAudit('consents/:ref', 'DELETE', 'demo', token)?.action, 'consent.revoke')
  t.equal(graphAudit('consents/:ref', 'GET', 'demo', token), undefined)
  t.equal(graphAudit('consents/:ref/grant', 'POST', 'demo', token)?.action, 'consent.grant')
  t.equal(graphAudit('consents/:ref/revokedProperties', 'PUT', 'demo', token)?.action, 'consent.revokedProperties')
  t.match(graphAudit('export', 'GET', 'demo', token), { action: 'tenant.export', what: { tenant: 'demo' }, evenIfCut: true }, 'an export, even one cut short')
  t.match(graphAudit('import', 'POST', 'demo', token), { action: 'tenant.import', what: { tenant: 'demo' }, evenIfCut: undefined })
  t.equal(graphAudit('nodes/:ns/:type/:id', 'PUT', 'demo', token), undefined)
})

t.test('request ids: the trace id, else traceparent, else a new one', async (t) => {
  t.equal(requestIdOf('abc-123', ''), 'abc-123')
  t.equal(requestIdOf('', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'), '4bf92f3577b34da6a3ce929d0e0e4736')
  t.match(requestIdOf('has spaces\nand a newline', 'garbage'), /^[0-9a-f-]{36}$/, 'a header that is not a plain token is not logged')
  t.match(requestIdOf('x'.repeat(200), ''), /^[0-9a-f-]{36}$/)
})

t.test('webhook lag reads the envelope time, not a payload field', async (t) => {
  t.equal(eventAgeMs('{"id":"x","payload":{"time":5},"time":1000}', 1500), 500)
  t.equal(eventAgeMs('{"id":"x"}', 1500), undefined)
})

t.test('--metrics and --log-level', async (t) => {
  t.equal(loadConfig([], {}).metrics, 'open')
  t.equal(loadConfig(['--metrics', 'token'], {}).metrics, 'token')
  t.equal(loadConfig([], { METRICS: 'off' }).metrics, 'off')
  t.throws(() => loadConfig(['--metrics', 'yes'], {}), { message: /METRICS must be one of open, off, token/ })
  t.equal(loadConfig([], {}).logLevel, 'info')
  t.equal(loadConfig([], { LOG_LEVEL: 'debug' }).logLevel, 'debug')
  t.throws(() => loadConfig(['--log-level', 'loud'], {}), { message: /LOG_LEVEL must be one of/ })
})
