// What the /oauth2/v1 routes answer (src/auth/routes.ts): the bodies'
// schemas as the endpoints build them (token-response.ts, tokeninfo.ts,
// introspect.ts, discovery.ts, admin/*). The document lists them and the
// contract test (test/http/openapi-contract-oauth.test.ts) holds every answer to them.
import { Type, type TSchema } from '@sinclair/typebox'
import type { AnswerSpec } from '../../http/route'

const nullable = (schema: TSchema): TSchema => Type.Union([schema, Type.Null()])
const Strings = Type.Array(Type.String())
const open = <T extends Record<string, TSchema>>(fields: T, description?: string) =>
  Type.Object(fields, { additionalProperties: true, ...(description === undefined ? {} : { description }) })

export const TokenAnswer = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds (3600)' }),
  scope: Type.String({ description: 'the effective scopes, space-separated' }),
  refresh_token: Type.Optional(Type.String({ description: 'authorization code and password grants' })),
  id_token: Type.Optional(Type.String({ description: 'a JWT (RS256), when openid was asked for in the code exchange' })),
}, { additionalProperties: false })

export const Discovery = open({
  issuer: Type.String(), authorization_endpoint: Type.String(), token_endpoint: Type.String(), jwks_uri: Type.String(),
  response_types_supported: Strings, scopes_supported: Strings,
}, 'OpenID Connect Discovery 1.0 / RFC 8414 metadata')

export const Jwks = Type.Object({ keys: Type.Array(open({ kty: Type.String(), kid: Type.String() })) }, { additionalProperties: false })

export const TokenInfo = open({
  active: Type.Literal(true),
  tenant: nullable(Type.String()),
  org: nullable(Type.String()),
  scopes: Strings,
  scope: Type.String(),
  allowedServices: Type.Array(Type.Unknown()),
  client_id: nullable(Type.String()),
  subject: nullable(Type.String()),
  token_type: Type.String(),
  expires_in: Type.Integer(),
  exp: Type.Integer(),
})

/** RFC 7662: `{"active": false}` for a token the caller may not see or that is not live. */
export const Introspection = Type.Union([
  Type.Object({ active: Type.Literal(false) }, { additionalProperties: false }),
  open({ active: Type.Literal(true), scope: Type.String(), token_type: Type.String(), iss: Type.String() }),
])

export const UserInfo = Type.Object({
  sub: Type.String(), preferred_username: Type.String(), email: Type.String(), email_verified: Type.Boolean(),
  tenants: Type.Array(Type.String(), { description: "the tenants the user is a member of (the ids of the user record's tenants)" }),
}, { additionalProperties: false })

export const RefreshTokenList = Type.Array(Type.Object({
  id: Type.String(), client_id: Type.String(), tenant: nullable(Type.String()), scope: Type.String(), created: Type.String({ description: 'ISO 8601' }),
}, { additionalProperties: false }))

export const SubscriptionEventPage = Type.Object({
  events: Type.Array(open({ sequence: Type.Integer() }, 'a subscription event (spec section 6)')),
  next: Type.Integer(),
}, { additionalProperties: false })

/** An HTML page (sign-in, consent, sign-out, or the outcome). */
export const HtmlPage: AnswerSpec = { content: { 'text/html': Type.String() } }

/** A redirect to the client (or back to the sign-in): where, in Location. */
export const Redirect: AnswerSpec = { headers: { location: Type.String({ description: 'the target, with the code, tokens or error' }) } }

const Tenant = Type.Object({ id: Type.String(), org: Type.String() }, { additionalProperties: false })
const Package = open({ id: Type.String(), version: Type.String(), provider: open({ id: Type.String(), org: Type.String() }), includedServices: Type.Array(open({ id: Type.String(), name: Type.String() })) })
const Subscription = Type.Object({ id: Type.String(), tenant: Type.String(), package: Type.String(), validFrom: Type.String() }, { additionalProperties: false })
const clientFields = {
  client_id: Type.String(), tenant: Type.String(), public: Type.Boolean(), secret_hash: nullable(Type.String()),
  redirect_uris: Strings, scopes: Strings, grant_types: Strings, cors_origins: Strings,
}
const Client = Type.Object(clientFields, { additionalProperties: false })
const ClientWithSecret = Type.Object({ ...clientFields, client_secret: Type.Optional(Type.String({ description: 'shown only here' })) }, { additionalProperties: false })
const User = Type.Object({
  id: Type.String(), username: Type.String(), email: Type.String(), email_verified: Type.Boolean(),
  tenants: Type.Record(Type.String(), Strings, { description: 'roles by tenant' }),
}, { additionalProperties: false })
const Role = Type.Object({ name: Type.String(), scopes: Strings }, { additionalProperties: false })
const SigningKey = Type.Object({
  kid: Type.String(), alg: Type.String(), status: Type.Union([Type.Literal('active'), Type.Literal('retired')]),
  created: Type.String(), retired: nullable(Type.String()), published: Type.Boolean(),
}, { additionalProperties: false })
const IdentityProvider = open({ id: Type.String(), issuer: Type.String(), client_id: Type.String(), client_secret_set: Type.Boolean(), redirect_uri: Type.String() })

/** The admin API's records as it shows them, and their lists. */
export const ADMIN = {
  tenant: Tenant, tenants: Type.Array(Tenant),
  package: Package, packages: Type.Array(Package),
  subscription: Subscription, subscriptions: Type.Array(Subscription),
  client: Client, clients: Type.Array(Client), clientWithSecret: ClientWithSecret,
  user: User, users: Type.Array(User),
  role: Role, roles: Type.Record(Type.String(), Strings, { description: 'scopes by role name' }),
  signingKey: SigningKey, signingKeys: Type.Array(SigningKey),
  identityProvider: IdentityProvider, identityProviders: Type.Array(IdentityProvider),
  backup: open({}, 'what the backup wrote (src/backups/take-backup.ts)'),
}
