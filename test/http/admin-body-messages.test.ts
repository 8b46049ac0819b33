// Every message of the admin API's body validation, pinned: the status, the
// error type and the exact words, for each kind of bad field (wrong shape:
// 400 bad_request; a value that breaks a rule: 400 validation_violation).
// Fields given as null where the API reads null as absent pass the shape;
// with several bad fields, the message names the one read first.
import t from 'tap'
import { adminToken, call, oauthServerForFile, type Json } from '../helpers/oauth'

const env = oauthServerForFile(t)
let admin: string
t.before(async () => {
  admin = await adminToken(env.issuer)
})

const NAME_RULE = 'is not acceptable: one word of visible ASCII (no quotes or backslashes), at most 128 characters'
/** A tenant id's rule: a name's, and not "__proto__" (the storage layer would read that key back otherwise). */
const TENANT_RULE = `${NAME_RULE}, other than "__proto__"`
const TEXT_RULE = 'is not acceptable: 1 to 256 characters, no control characters'
type Method = 'POST' | 'PUT'
type Case = readonly [Method, string, unknown, 'bad_request' | 'validation_violation', string]

const shape = (method: Method, path: string, body: unknown, message: string): Case => [method, path, body, 'bad_request', message]
const rule = (method: Method, path: string, body: unknown, message: string): Case => [method, path, body, 'validation_violation', message]

const user = { username: 'pin-user', email: 'pin@example.com', password: 'long enough' }
const svc = { id: 's', name: 'S', scopes: [] }
const pkg = (includedServices: unknown[]): unknown => ({ version: 'v1', provider: { id: 'demo', org: 'x' }, includedServices })
const idp = { issuer: 'https://idp.example', client_id: 'platform', link_by_verified_email: true }

const CASES: readonly Case[] = [
  shape('POST', 'tenants', '{"id":', 'the body must be a JSON object'),
  shape('POST', 'tenants', [1], 'the body must be a JSON object'),
  shape('POST', 'tenants', 'text', 'the body must be a JSON object'),
  shape('POST', 'tenants', {}, 'id must be a string'),
  shape('POST', 'tenants', { id: 5, org: 'o' }, 'id must be a string'),
  rule('POST', 'tenants', { id: 'two words', org: 'o' }, `id "two words" ${TENANT_RULE}`),
  rule('POST', 'tenants', { id: 'x', org: '' }, `org "" ${NAME_RULE}`),
  shape('POST', 'tenants', { id: 'x' }, 'org must be a string'),
  shape('PUT', 'tenants/pin', { org: null }, 'org must be a string'),
  rule('POST', 'tenants', { id: 'a b' }, `id "a b" ${TENANT_RULE}`),
  rule('POST', 'clients', { client_id: 'a b', public: 'x', redirect_uris: [1] }, `client_id "a b" ${NAME_RULE}`),
  rule('POST', 'users', { email: 'x', password: 1, username: 'ok' }, `email "x" ${NAME_RULE}`),

  rule('POST', 'clients', { client_id: 'a b', tenant: 'demo' }, `client_id "a b" ${NAME_RULE}`),
  shape('POST', 'clients', { client_id: 7, tenant: 'demo' }, 'client_id must be a string'),
  shape('POST', 'clients', { tenant: 'demo', public: 'yes' }, 'public must be true or false'),
  shape('POST', 'clients', { public: true }, 'tenant must be a string'),
  shape('POST', 'clients', { tenant: 'demo', redirect_uris: 'https://x' }, 'redirect_uris must be an array of strings'),
  shape('POST', 'clients', { tenant: 'demo', redirect_uris: [5] }, 'redirect_uris[0] must be a string'),
  rule('POST', 'clients', { tenant: 'demo', redirect_uris: ['https://a', 'has space'] }, 'redirect_uris[1] "has space" is not acceptable'),
  rule('POST', 'clients', { tenant: 'demo', scopes: ['a b'] }, 'scopes[0] "a b" is not acceptable'),
  shape('POST', 'clients', { tenant: 'demo', grant_types: {} }, 'grant_types must be an array of strings'),
  shape('POST', 'clients', { tenant: 'demo', cors_origins: [null] }, 'cors_origins[0] must be a string'),
  rule('POST', 'clients', { tenant: 'nope', public: null, redirect_uris: null, scopes: null, grant_types: null, cors_origins: null }, 'tenant "nope" does not exist'),
  shape('PUT', 'clients/web-app', { scopes: [1] }, 'scopes[0] must be a string'),
  shape('PUT', 'clients/web-app', { tenant: null }, 'tenant must be a string'),

  shape('POST', 'users', {}, 'username must be a string'),
  rule('POST', 'users', { ...user, username: 'u v' }, `username "u v" ${NAME_RULE}`),
  rule('POST', 'users', { ...user, email: 'x' }, `email "x" ${NAME_RULE}`),
  shape('POST', 'users', { username: 'pin-user', password: 'long enough' }, 'email must be a string'),
  rule('POST', 'users', { ...user, password: 'short' }, `password "short" ${NAME_RULE}`),
  shape('POST', 'users', { ...user, password: undefined }, 'password must be a string'),
  rule('POST', 'users', { ...user, id: 'a b' }, `id "a b" ${NAME_RULE}`),
  shape('POST', 'users', { ...user, id: 3 }, 'id must be a string'),
  rule('POST', 'users', { ...user, username: 'a"b' }, 'id "a"b" is not acceptable: give an id that is one word of visible ASCII'),
  shape('POST', 'users', { ...user, tenants: [] }, 'tenants must be a JSON object'),
  shape('POST', 'users', { ...user, tenants: null }, 'tenants must be a JSON object'),
  rule('POST', 'users', { ...user, tenants: { 'a b': ['x'] } }, 'tenants key "a b" is not acceptable'),
  shape('POST', 'users', { ...user, tenants: { demo: 'x' } }, 'tenants.demo must be an array of strings'),
  shape('POST', 'users', { ...user, tenants: { demo: [1] } }, 'tenants.demo[0] must be a string'),
  rule('POST', 'users', { ...user, tenants: { demo: ['a b'] } }, 'tenants.demo[0] "a b" is not acceptable'),
  rule('POST', 'users', { ...user, tenants: { nope: null } }, 'tenants: tenant "nope" does not exist'),
  shape('PUT', 'users/alice', { password: null }, 'password must be a string'),
  shape('PUT', 'users/alice', { email: 5 }, 'email must be a string'),
  shape('POST', 'users', { ...user, email_verified: 'yes' }, 'email_verified must be true or false'),

  shape('PUT', 'roles/pin', { scopes: 'x' }, 'scopes must be an array of strings'),
  rule('PUT', 'roles/pin', { scopes: ['ok', 'a b'] }, 'scopes[1] "a b" is not acceptable'),
  shape('PUT', 'roles/pin', [], 'the body must be a JSON object'),

  shape('POST', 'subscriptions', { tenant: 'demo' }, 'package must be a string'),
  shape('POST', 'subscriptions', { id: 5, tenant: 'demo', package: 'p' }, 'id must be a string'),
  rule('POST', 'subscriptions', { tenant: 'a b', package: 'p' }, `tenant "a b" ${NAME_RULE}`),

  shape('PUT', 'packages/pin', { provider: { id: 'demo', org: 'x' } }, 'version must be a string'),
  shape('PUT', 'packages/pin', { version: 'v1' }, 'provider must be a JSON object'),
  shape('PUT', 'packages/pin', { version: 'v1', provider: { id: 'demo' } }, 'provider.org must be a string'),
  rule('PUT', 'packages/pin', { version: 'v1', provider: { id: 'a b', org: 'x' } }, `provider.id "a b" ${NAME_RULE}`),
  shape('PUT', 'packages/pin', pkg('x' as unknown as unknown[]), 'includedServices must be an array of objects'),
  shape('PUT', 'packages/pin', pkg([5]), 'includedServices[0] must be a JSON object'),
  shape('PUT', 'packages/pin', pkg([svc, { name: 'S' }]), 'includedServices[1].id must be a string'),
  rule('PUT', 'packages/pin', pkg([{ ...svc, name: '\u0001' }]), `includedServices[0].name "\u0001" ${TEXT_RULE}`),
  shape('PUT', 'packages/pin', pkg([{ ...svc, scopes: 'x' }]), 'includedServices[0].scopes must be an array of strings'),
  rule('PUT', 'packages/pin', pkg([{ ...svc, sourceUrl: 'ftp://x' }]), `includedServices[0].sourceUrl "ftp://x" ${NAME_RULE}`),
  rule('PUT', 'packages/pin', { version: 'v1', provider: { id: 'nope', org: 'x' }, includedServices: null }, 'provider.id: tenant "nope" does not exist'),

  shape('POST', 'backups', {}, 'to must be a string'),
  rule('POST', 'backups', { to: '' }, `to "" ${TEXT_RULE}`),

  rule('PUT', 'identity-providers/idp_default', {}, '"idp_default" is the name of a built-in identity provider'),
  shape('PUT', 'identity-providers/pin', {}, 'issuer must be a string'),
  rule('PUT', 'identity-providers/pin', { ...idp, issuer: 'a b' }, `issuer "a b" ${NAME_RULE}`),
  rule('PUT', 'identity-providers/pin', { ...idp, issuer: 'ftp://x' }, 'issuer "ftp://x" must be an http or https URL without query or fragment'),
  rule('PUT', 'identity-providers/pin', { ...idp, issuer: 'https://x/?q' }, 'issuer "https://x/?q" must be an http or https URL without query or fragment'),
  shape('PUT', 'identity-providers/pin', { ...idp, client_id: undefined }, 'client_id must be a string'),
  shape('PUT', 'identity-providers/pin', { ...idp, scopes: 'openid' }, 'scopes must be an array of strings'),
  shape('PUT', 'identity-providers/pin', { ...idp, claims: 5 }, 'claims must be a JSON object'),
  rule('PUT', 'identity-providers/pin', { ...idp, claims: { username: 'a b' } }, `claims.username "a b" ${NAME_RULE}`),
  shape('PUT', 'identity-providers/pin', { ...idp, claims: { email: false } }, 'claims.email must be a string'),
  shape('PUT', 'identity-providers/pin', { ...idp, link_by_verified_email: 'x' }, 'link_by_verified_email must be true or false'),
  rule('PUT', 'identity-providers/pin', { ...idp, provisioning: { tenants: {} } }, 'give either provisioning or link_by_verified_email, not both'),
  rule('PUT', 'identity-providers/pin', { ...idp, link_by_verified_email: null }, 'provisioning ({"tenants": {tenant: [role]}}) or link_by_verified_email: true is required'),
  shape('PUT', 'identity-providers/pin', { ...idp, link_by_verified_email: false, provisioning: {} }, 'provisioning.tenants must be a JSON object'),
  rule('PUT', 'identity-providers/pin', { ...idp, link_by_verified_email: false, provisioning: { tenants: { 'a b': [] } } }, 'provisioning.tenants key "a b" is not acceptable'),
  shape('PUT', 'identity-providers/pin', { ...idp, client_secret: 5 }, 'client_secret must be a string'),
  rule('PUT', 'identity-providers/pin', { ...idp, client_secret: 'a b' }, 'client_secret "a b" is not acceptable: one word of visible ASCII (no quotes or backslashes), at most 128 characters'),
  rule('PUT', 'identity-providers/pin', { ...idp, link_by_verified_email: false, provisioning: { tenants: { nope: [] } }, client_secret: null }, 'provisioning.tenants: tenant "nope" does not exist'),
]

t.test('each bad admin body gets its own status, type and message', async (t) => {
  for (const [method, path, body, type, message] of CASES) {
    const text = typeof body === 'string' ? body : JSON.stringify(body)
    const res = await call(method, `${env.issuer}/admin/${path}`, { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, text)
    t.same({ status: res.status, type: res.json<Json>().type, message: res.json<Json>().message }, { status: 400, type, message }, `${method} ${path} ${text}`)
  }
  const tenants = await call('GET', `${env.issuer}/admin/tenants/pin`, { authorization: `Bearer ${admin}` })
  t.equal(tenants.status, 404, 'nothing was written')
})
