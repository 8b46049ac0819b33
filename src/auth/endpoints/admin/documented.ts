// The admin API's bodies as schemas, for GET /openapi.json only: the
// handlers read them field by field (src/auth/helpers/json-body.ts), whose
// messages, defaults and partial updates are the API's contract.
import { Type } from '@sinclair/typebox'

const name = (description: string): ReturnType<typeof Type.String> =>
  Type.String({ description: `${description}: one word of visible ASCII, at most 128 characters` })
const names = (description: string): ReturnType<typeof Type.Array> => Type.Array(name(description))

export const TenantBody = Type.Object({ id: name('the tenant'), org: name('its organization') }, { example: { id: 'acme', org: 'acme-org' } })
export const TenantReplaceBody = Type.Object({ org: name('its organization') }, { example: { org: 'acme-org' } })

export const ClientBody = Type.Object({
  client_id: Type.Optional(name('the id (generated if absent)')),
  tenant: name('the tenant'),
  public: Type.Optional(Type.Boolean({ description: 'a public client has no secret and must use PKCE' })),
  redirect_uris: Type.Optional(Type.Array(Type.String())),
  scopes: Type.Optional(names('a scope')),
  grant_types: Type.Optional(names('a grant type')),
}, { example: { client_id: 'shop-web', tenant: 'acme', redirect_uris: ['https://shop.example.com/cb'], scopes: ['openid'], grant_types: ['authorization_code'] } })

export const UserBody = Type.Object({
  id: Type.Optional(name('the user id, the `sub` (the username if absent)')),
  username: Type.String(),
  email: Type.String(),
  password: Type.String({ description: '8 to 1024 characters; stored as scrypt' }),
  tenants: Type.Optional(Type.Record(Type.String(), names('a role'), { description: 'roles per tenant' })),
}, { example: { username: 'ada', email: 'ada@example.com', password: 'correct horse battery', tenants: { acme: ['enricher'] } } })

export const RoleBody = Type.Object({ scopes: names('a scope') }, { example: { scopes: ['platform.profile_graph_view'] } })

export const SubscriptionBody = Type.Object({
  id: Type.Optional(name('the id (a UUID if absent)')), tenant: name('the subscribing tenant'), package: name('the package'),
}, { example: { tenant: 'acme', package: 'profile-basic' } })

export const PackageBody = Type.Object({
  version: name('the version'),
  provider: Type.Object({ id: name('the provider tenant'), org: name('its organization') }),
  includedServices: Type.Array(Type.Object({ id: name('the service'), name: Type.String(), scopes: names('a scope') })),
}, { example: { version: 'v1', provider: { id: 'acme', org: 'acme-org' }, includedServices: [{ id: 'graph', name: 'Profile graph', scopes: ['platform.profile_graph_view'] }] } })
