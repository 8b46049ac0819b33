// The admin API's bodies as schemas: the handlers read them through
// bodyReader (src/auth/helpers/json-body.ts), which words the first bad
// field's 400 as the API always has, and GET /openapi.json shows them.
// Fields are declared in the order the handlers read them, so the field a
// message names is the one a reader meets first.
import { Type } from '@sinclair/typebox'
import { SOURCE_URL } from '../../../bootstrap/bootstrap-file'
import { field, flag, list, nameLists, objects, TENANT_ID, TENANT_ID_RULE, text, URI } from '../../helpers/json-body'
import { EMAIL, PASSWORD, USERNAME } from '../../helpers/user-rules'

const name = (description: string): ReturnType<typeof field> => field({ description: `${description}: one word of visible ASCII, at most 128 characters` })
const names = (description: string): ReturnType<typeof list> => list({ description: `${description} each: one word of visible ASCII, at most 128 characters` })

const tenantId = field({ description: 'the tenant: one word of visible ASCII, at most 128 characters, not "__proto__"' }, TENANT_ID, TENANT_ID_RULE)
export const TenantBody = Type.Object({ id: tenantId, org: name('its organization') }, { example: { id: 'acme', org: 'acme-org' } })
export const TenantParams = Type.Object({ id: tenantId })
export const TenantReplaceBody = Type.Object({ org: name('its organization') }, { example: { org: 'acme-org' } })

const clientSettings = {
  tenant: name('the tenant'),
  redirect_uris: Type.Optional(list({ description: 'printable, at most 2048 characters each' }, URI)),
  scopes: Type.Optional(names('the scopes')),
  // The spec makes a refresh token part of every code exchange: "refresh_token" here is accepted but decides nothing.
  grant_types: Type.Optional(names('the grant types the client may use at /authorize and /token (authorization_code, implicit, client_credentials, password); a code exchange always returns a refresh token, usable by its client until revoked, whether or not "refresh_token" is listed')),
  cors_origins: Type.Optional(list({ description: 'origins a browser app may call from' }, URI)),
}
export const ClientBody = Type.Object({
  client_id: Type.Optional(name('the id (generated if absent)')),
  public: Type.Optional(flag({ description: 'a public client has no secret and must use PKCE' })),
  ...clientSettings,
}, { example: { client_id: 'shop-web', tenant: 'acme', redirect_uris: ['https://shop.example.com/cb'], scopes: ['openid'], grant_types: ['authorization_code'] } })
export const ClientUpdateBody = Type.Partial(Type.Object(clientSettings), { example: { scopes: ['openid', 'platform.profile_graph_view'] } })

const userFields = {
  username: field({ description: 'no spaces or control characters, at most 128 characters' }, USERNAME),
  email: field({}, EMAIL),
  email_verified: Type.Optional(flag({ description: 'whether the e-mail was verified (the ID token claim email_verified); false if absent; an e-mail change without it sets it false' })),
  tenants: Type.Optional(nameLists({ description: 'roles per tenant' })),
}
const password = field({ description: '8 to 1024 characters; stored as scrypt' }, PASSWORD)
export const UserBody = Type.Object({ ...userFields, id: Type.Optional(name('the user id, the `sub` (the username if absent)')), password }, {
  example: { username: 'ada', email: 'ada@example.com', password: 'correct horse battery', tenants: { acme: ['enricher'] } },
})
export const UserUpdateBody = Type.Partial(Type.Object({ ...userFields, password }), { example: { email: 'ada@example.org' } })

export const RoleBody = Type.Object({ scopes: Type.Optional(names('the scopes')) }, { example: { scopes: ['platform.profile_graph_view'] } })

export const SubscriptionBody = Type.Object({
  id: Type.Optional(name('the id (a UUID if absent)')), tenant: name('the subscribing tenant'), package: name('the package'),
}, { example: { tenant: 'acme', package: 'profile-basic' } })

const ServiceBody = Type.Object({
  id: name('the service'),
  name: text({ description: '1 to 256 characters, no control characters' }),
  scopes: Type.Optional(names('the scopes it defines')),
  sourceUrl: Type.Optional(field({ description: 'where the gateway forwards its calls: http(s), no query or fragment' }, SOURCE_URL)),
})
export const PackageBody = Type.Object({
  version: name('the version'),
  provider: Type.Object({ id: name('the provider tenant'), org: name('its organization') }),
  includedServices: Type.Optional(objects(ServiceBody)),
}, { example: { version: 'v1', provider: { id: 'acme', org: 'acme-org' }, includedServices: [{ id: 'graph', name: 'Profile graph', scopes: ['platform.profile_graph_view'] }] } })

export const BackupBody = Type.Object({ to: text({ description: 'an absolute path on the server host, new or empty' }) }, { example: { to: '/var/backups/graph-1' } })
