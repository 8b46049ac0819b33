// The authorization service's routes under /oauth2/v1/. A pattern segment
// ":x" captures one (percent-decoded, non-empty) path segment; the handler
// receives the captures by name (its `params` schema). Methods with `scope`
// need a bearer token with it, checked by the dispatcher before the body is
// read (the admin API). To add a route: docs/design/architecture.md.
import { ApiError } from '../core/errors'
import type { RouteMethods, RouteTable } from '../http/route'
import * as adminBackups from './endpoints/admin/backups'
import * as adminClients from './endpoints/admin/clients'
import * as adminPackages from './endpoints/admin/packages'
import * as adminRoles from './endpoints/admin/roles'
import * as adminKeys from './endpoints/admin/signing-keys'
import * as adminSubscriptions from './endpoints/admin/subscriptions'
import * as adminTenants from './endpoints/admin/tenants'
import * as adminUsers from './endpoints/admin/users'
import * as adminIdentityProviders from './endpoints/admin/identity-providers'
import { idpCallbackEndpoint } from './endpoints/idp-callback'
import { authorizeEndpoint } from './endpoints/authorize/endpoint'
import { discoveryEndpoint, JWKS_PATH, jwksEndpoint } from './endpoints/discovery'
import { endSessionEndpoint } from './endpoints/end-session'
import { eventsEndpoint } from './endpoints/events'
import { introspectEndpoint } from './endpoints/introspect'
import { nameTooLong } from '../model/name-limit'
import { deleteRefreshTokens, listRefreshTokens } from './endpoints/refreshtokens'
import { revokeEndpoint } from './endpoints/revoke'
import type { AuthServices } from './services'
import { tokenEndpoint } from './endpoints/token'
import { tokeninfoEndpoint } from './endpoints/tokeninfo'
import { userinfoGet, userinfoPost } from './endpoints/userinfo'

export type OAuthMethods = RouteMethods<AuthServices, object>

export const OAUTH_ROUTES: RouteTable<AuthServices, object> = [
  ['.well-known/openid-configuration', { GET: discoveryEndpoint }],
  [JWKS_PATH, { GET: jwksEndpoint }],
  ['authorize', authorizeEndpoint],
  ['token', { POST: tokenEndpoint }],
  ['revoke', { POST: revokeEndpoint }],
  ['introspect', { POST: introspectEndpoint }],
  ['.well-known/oauth-authorization-server', { GET: discoveryEndpoint }],
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
  ['admin/roles/:id', { GET: adminRoles.getRole, PUT: adminRoles.replaceRole, DELETE: adminRoles.deleteRole }],
  ['admin/signing-keys', { GET: adminKeys.listSigningKeys, POST: adminKeys.rotateSigningKeys }],
  ['admin/identity-providers', { GET: adminIdentityProviders.listIdentityProviders }],
  ['admin/identity-providers/:id', {
    GET: adminIdentityProviders.getIdentityProvider, PUT: adminIdentityProviders.replaceIdentityProvider, DELETE: adminIdentityProviders.deleteIdentityProvider,
  }],
  ['idp/:id/callback', { GET: idpCallbackEndpoint }],
  ['admin/backups', { POST: adminBackups.createBackup }],
]

/** Every captured segment names a record whose id is at most MAX_NAME_CHARS long; a longer one is a 400, never a key lookup. */
export function checkOAuthCapture(segment: string): void {
  const long = nameTooLong(`path segment "${segment.slice(0, 32)}..."`, segment)
  if (long !== undefined) throw new ApiError('bad_request', long)
}
