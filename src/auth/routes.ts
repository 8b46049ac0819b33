// The authorization service's routes under /oauth2/v1/. A pattern segment
// ":x" captures one (percent-decoded) path segment; the handler receives the
// captures in order. Methods with `scope` need a bearer token with it,
// checked by the dispatcher before the body is read (the admin API).
import { ApiError } from '../errors'
import type { Method } from '../front/route'
import * as adminClients from './endpoints/admin/clients'
import * as adminPackages from './endpoints/admin/packages'
import * as adminRoles from './endpoints/admin/roles'
import * as adminKeys from './endpoints/admin/signing-keys'
import * as adminSubscriptions from './endpoints/admin/subscriptions'
import * as adminTenants from './endpoints/admin/tenants'
import * as adminUsers from './endpoints/admin/users'
import { authorizeEndpoint } from './endpoints/authorize/endpoint'
import { discoveryEndpoint, JWKS_PATH, jwksEndpoint } from './endpoints/discovery'
import { endSessionEndpoint } from './endpoints/end-session'
import { eventsEndpoint } from './endpoints/events'
import { nameTooLong } from '../model/name-limit'
import { deleteRefreshTokens, listRefreshTokens } from './endpoints/refreshtokens'
import { revokeEndpoint } from './endpoints/revoke'
import type { OAuthMethod } from './route-types'
import { tokenEndpoint } from './endpoints/token'
import { tokeninfoEndpoint } from './endpoints/tokeninfo'
import { userinfoGet, userinfoPost } from './endpoints/userinfo'

export type OAuthMethods = Partial<Record<Method, OAuthMethod>>

export const OAUTH_ROUTES: readonly [string, OAuthMethods][] = [
  ['.well-known/openid-configuration', { GET: discoveryEndpoint }],
  [JWKS_PATH, { GET: jwksEndpoint }],
  ['authorize', authorizeEndpoint],
  ['token', { POST: tokenEndpoint }],
  ['revoke', { POST: revokeEndpoint }],
  ['tokeninfo', { GET: tokeninfoEndpoint }],
  ['userinfo', { GET: userinfoGet, POST: userinfoPost }],
  ['refreshtokens', { GET: listRefreshTokens, DELETE: deleteRefreshTokens }],
  ['end_session', endSessionEndpoint],
  ['events', { GET: eventsEndpoint }],
  ['admin/tenants', { GET: adminTenants.listTenants, POST: adminTenants.createTenant }],
  ['admin/tenants/:id', { GET: adminTenants.getTenant, PUT: adminTenants.replaceTenant, DELETE: adminTenants.deleteTenant }],
  ['admin/packages', { GET: adminPackages.listPackages }],
  ['admin/packages/:id', { GET: adminPackages.getPackage, PUT: adminPackages.replacePackage, DELETE: adminPackages.deletePackage }],
  ['admin/subscriptions', { GET: adminSubscriptions.listSubscriptions, POST: adminSubscriptions.createSubscription }],
  ['admin/subscriptions/:id', { GET: adminSubscriptions.getSubscription, DELETE: adminSubscriptions.cancelSubscription }],
  ['admin/clients', { GET: adminClients.listClients, POST: adminClients.createClient }],
  ['admin/clients/:id', { GET: adminClients.getClient, PUT: adminClients.updateClient, DELETE: adminClients.deleteClient }],
  ['admin/clients/:id/secret', { POST: adminClients.rotateClientSecret }],
  ['admin/users', { GET: adminUsers.listUsers, POST: adminUsers.createUser }],
  ['admin/users/:id', { GET: adminUsers.getUser, PUT: adminUsers.updateUser, DELETE: adminUsers.deleteUser }],
  ['admin/roles', { GET: adminRoles.listRoles }],
  ['admin/roles/:name', { GET: adminRoles.getRole, PUT: adminRoles.replaceRole, DELETE: adminRoles.deleteRole }],
  ['admin/signing-keys', { GET: adminKeys.listSigningKeys, POST: adminKeys.rotateSigningKeys }],
]

/** Every captured segment names a record whose id is at most MAX_NAME_CHARS long; a longer one is a 400, never a key lookup. */
function boundedParam(segment: string): string {
  const long = nameTooLong(`path segment "${segment.slice(0, 32)}..."`, segment)
  if (long !== undefined) throw new ApiError('bad_request', long)
  return segment
}

const COMPILED = OAUTH_ROUTES.map(([pattern, methods]) => ({ pattern, parts: pattern.split('/'), methods }))

/** The route for the segments after /oauth2/v1, with the captured parameters. */
export function findOAuthRoute(segments: readonly string[]): { methods: OAuthMethods; params: string[]; pattern: string } | undefined {
  for (const { pattern, parts, methods } of COMPILED) {
    if (parts.length !== segments.length) continue
    const params: string[] = []
    let ok = true
    for (let i = 0; i < parts.length && ok; i++) {
      if (parts[i]!.startsWith(':')) {
        if (segments[i] === '') ok = false
        else params.push(segments[i]!)
      } else ok = parts[i] === segments[i]
    }
    if (ok) return { methods, params: params.map(boundedParam), pattern }
  }
  return undefined
}
