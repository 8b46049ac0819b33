// Scope rules of the authorization spec (sections 1.5, 4 and 5.7).
//
// The tenant comes from platform.tenant=<t>; without it (or with
// platform.no_tenant) the client's parent tenant. A client may serve its own
// tenant with all its scopes; another tenant must be subscribed to a package
// whose provider is the client's tenant, and then only that package's scopes
// are available. For user grants the user must be a member of the tenant and
// the scopes are further limited by the user's roles there. The asked scopes
// are intersected with what is available; none asked means all of it.
import { ApiError } from '../../core/errors'
import { own } from '../../model/own-key'
import type { ClientRecord, UserRecord } from '../models/auth-store'
import type { AuthModels } from '../models/index'
import { isAccountClient } from '../models/account-client'

/** The records scopes come from (`s.oauth` has them). */
export type ScopeModels = Pick<AuthModels, 'tenants' | 'packages' | 'subscriptions' | 'roles'>

export const TENANT_SCOPE = 'platform.tenant='
export const ORG_SCOPE = 'platform.org='
export const NO_TENANT_SCOPE = 'platform.no_tenant'
export const OPENID_SCOPE = 'openid'
/** OpenID Connect's claim scopes (Core 5.4): with openid they ask for the user's claims, and are granted as openid is. */
export const PROFILE_SCOPE = 'profile'
export const EMAIL_SCOPE = 'email'
export const OIDC_SCOPES: readonly string[] = [OPENID_SCOPE, PROFILE_SCOPE, EMAIL_SCOPE]

export const invalidScope = (description: string): ApiError =>
  new ApiError('bad_request', description, { oauth: { error: 'invalid_scope', error_description: description } })

export interface Grant {
  /** undefined for an organization or no-tenant token */
  tenant: string | undefined
  org?: string
  scopes: string[]
}

export function splitScope(scope: string | null | undefined): string[] {
  return (scope ?? '').split(' ').filter((s) => s !== '')
}

export interface ScopeRequest {
  tenant: string | undefined
  noTenant: boolean
  org: string | undefined
  /** the other scopes, without duplicates, in the asked order; undefined when none was asked */
  asked: string[] | undefined
}

const isSpecial = (s: string): boolean => s.startsWith(TENANT_SCOPE) || s.startsWith(ORG_SCOPE) || s === NO_TENANT_SCOPE

/** Parses a scope parameter and enforces the combination rules of the tenant scopes. */
export function parseScopeRequest(scopeParam: string | null | undefined, orgAllowed: boolean): ScopeRequest {
  const requested = splitScope(scopeParam)
  const tenants = requested.filter((s) => s.startsWith(TENANT_SCOPE))
  const orgs = requested.filter((s) => s.startsWith(ORG_SCOPE))
  const noTenant = requested.includes(NO_TENANT_SCOPE)
  if (orgs.length > 0 && !orgAllowed) throw invalidScope('platform.org is not supported for this grant')
  if (tenants.length > 1) throw invalidScope('only one platform.tenant scope may be requested')
  if (orgs.length > 1) throw invalidScope('only one platform.org scope may be requested')
  if (tenants.length === 1 && noTenant) throw invalidScope('platform.tenant cannot be combined with platform.no_tenant')
  if (orgs.length === 1 && (tenants.length === 1 || noTenant)) {
    throw invalidScope('platform.org cannot be combined with platform.tenant or platform.no_tenant')
  }
  const tenant = tenants.length === 1 ? tenants[0]!.slice(TENANT_SCOPE.length) : undefined
  const org = orgs.length === 1 ? orgs[0]!.slice(ORG_SCOPE.length) : undefined
  if (tenant === '') throw invalidScope('platform.tenant needs a tenant id')
  if (org === '') throw invalidScope('platform.org needs an organization id')
  const rest = [...new Set(requested.filter((s) => !isSpecial(s)))]
  return { tenant, noTenant, org, asked: rest.length === 0 ? undefined : rest }
}

/** Scopes the tenant's subscriptions give it to packages of `provider` (undefined: to any provider). */
function subscribedScopes(models: ScopeModels, tenant: string, provider: string | undefined): Set<string> | undefined {
  let found = false
  const scopes = new Set<string>()
  for (const sub of models.subscriptions.all()) {
    if (sub.tenant !== tenant) continue
    const pkg = models.packages.find(sub.package)
    if (pkg === undefined || (provider !== undefined && pkg.provider.id !== provider)) continue
    found = true
    for (const service of pkg.includedServices) for (const s of service.scopes) scopes.add(s)
  }
  return found ? scopes : undefined
}

/** Scopes of the packages a tenant provides (its own services). */
function ownScopes(models: ScopeModels, tenant: string): Set<string> {
  const scopes = new Set<string>()
  for (const pkg of models.packages.all()) {
    if (pkg.provider.id === tenant) for (const service of pkg.includedServices) for (const s of service.scopes) scopes.add(s)
  }
  return scopes
}

/**
 * What a client may get for a tenant: all its scopes for its own tenant, the
 * subscribed part of them for a subscriber. Without a client (password grant
 * without client_id) what the tenant owns or subscribed to.
 */
export function tenantScopes(models: ScopeModels, tenant: string, client: ClientRecord | undefined): Set<string> {
  // The account page's client holds no service scope to give: in any tenant its token is the user's and no more.
  if (isAccountClient(client)) return new Set()
  if (client === undefined) return new Set([...ownScopes(models, tenant), ...(subscribedScopes(models, tenant, undefined) ?? [])])
  if (tenant === client.tenant) return new Set(client.scopes)
  const subscribed = subscribedScopes(models, tenant, client.tenant)
  if (subscribed === undefined) throw invalidScope(`tenant "${tenant}" has no subscription to the services of tenant "${client.tenant}"`)
  return new Set(client.scopes.filter((s) => subscribed.has(s)))
}

/** `asked` limited to `available` (all of it when nothing was asked). */
function pick(asked: string[] | undefined, available: Set<string>): string[] {
  return asked === undefined ? [...available] : asked.filter((s) => available.has(s))
}

export function clientCredentialsGrant(models: ScopeModels, client: ClientRecord, scopeParam: string | null): Grant {
  const req = parseScopeRequest(scopeParam, false)
  const tenant = req.tenant ?? client.tenant
  return { tenant, scopes: pick(req.asked, tenantScopes(models, tenant, client)) }
}

// ---- user grants ----

export type UserFlow = 'code' | 'implicit' | 'password'

/** The tenant a user grant is for, or an organization, or none (implicit flow with platform.no_tenant). */
export type Target = { tenant: string } | { org: string } | { none: true }

/** A user who is not a member of the needed tenant: access_denied at /authorize, invalid_scope at /token. */
export function notMember(description: string, flow: UserFlow): ApiError {
  if (flow === 'password') return invalidScope(description)
  return new ApiError('forbidden', description, { oauth: { error: 'access_denied', error_description: description } })
}

function roleScopes(models: ScopeModels, user: UserRecord, tenant: string): Set<string> {
  const scopes = new Set<string>()
  for (const role of own(user.tenants, tenant) ?? []) for (const s of models.roles.find(role) ?? []) scopes.add(s)
  return scopes
}

const isMember = (user: UserRecord, tenant: string): boolean => Object.hasOwn(user.tenants, tenant)

/** The tenant selection of spec section 4 when no tenant scope is given. */
function defaultTenant(client: ClientRecord | undefined, user: UserRecord, flow: UserFlow): string {
  if (client !== undefined && flow !== 'implicit') return client.tenant
  const tenants = Object.keys(user.tenants)
  if (tenants.length === 0) throw notMember(`user "${user.username}" belongs to no tenant`, flow)
  if (tenants.length === 1) return tenants[0]!
  if (client !== undefined && tenants.includes(client.tenant)) return client.tenant
  throw notMember(`user "${user.username}" belongs to several tenants: ask for one with platform.tenant=<tenant>`, flow)
}

export function userTarget(req: ScopeRequest, client: ClientRecord | undefined, user: UserRecord, flow: UserFlow): Target {
  if (req.org !== undefined) return { org: req.org }
  if (req.tenant !== undefined) return { tenant: req.tenant }
  if (req.noTenant && flow === 'implicit') return { none: true }
  // The account page signs in before it knows the user's tenants: identity only, then a token per tenant.
  if (isAccountClient(client)) return { none: true }
  return { tenant: defaultTenant(client, user, flow) }
}

/** What a user may get through a client for a target: the client's and the tenant's limits and the user's roles. */
export function userGrantFor(
  models: ScopeModels, client: ClientRecord | undefined, user: UserRecord, target: Target, asked: string[] | undefined, flow: UserFlow,
): Grant {
  // openid (with profile and email beside it) is a protocol scope: always granted when asked, and asking
  // only for protocol scopes means no service scope was named. Without openid, profile and email mean nothing.
  const openid = asked?.includes(OPENID_SCOPE) === true ? OIDC_SCOPES.filter((s) => asked.includes(s)) : []
  const rest = asked?.filter((s) => !openid.includes(s))
  const askedRest = rest === undefined || rest.length === 0 ? undefined : rest
  if ('none' in target) return { tenant: undefined, scopes: openid }
  if ('tenant' in target) {
    const { tenant } = target
    if (!isMember(user, tenant)) throw notMember(`user "${user.username}" is not a member of tenant "${tenant}"`, flow)
    const roles = roleScopes(models, user, tenant)
    const available = new Set([...tenantScopes(models, tenant, client)].filter((s) => roles.has(s)))
    return { tenant, scopes: [...pick(askedRest, available), ...openid] }
  }
  const tenants = Object.keys(user.tenants).filter((t) => models.tenants.find(t)?.org === target.org)
  if (tenants.length === 0) throw notMember(`user "${user.username}" is not a member of a tenant of organization "${target.org}"`, flow)
  const available = new Set<string>()
  for (const tenant of tenants) {
    const roles = roleScopes(models, user, tenant)
    let offered: Set<string>
    try {
      offered = tenantScopes(models, tenant, client)
    } catch {
      continue
    }
    for (const s of offered) if (roles.has(s)) available.add(s)
  }
  return { tenant: undefined, org: target.org, scopes: [...pick(askedRest, available), ...openid] }
}

export function userGrant(models: ScopeModels, client: ClientRecord | undefined, user: UserRecord, scopeParam: string | null, flow: UserFlow): Grant {
  const req = parseScopeRequest(scopeParam, flow !== 'code')
  return userGrantFor(models, client, user, userTarget(req, client, user, flow), req.asked, flow)
}

/** The scope string of a grant: its scopes, then the tenant, organization or no-tenant scope. */
export function scopeString(grant: Grant): string {
  return grantScopes(grant).join(' ')
}

export function grantScopes(grant: Grant): string[] {
  const last = grant.tenant !== undefined ? `${TENANT_SCOPE}${grant.tenant}` : grant.org !== undefined ? `${ORG_SCOPE}${grant.org}` : NO_TENANT_SCOPE
  return [...grant.scopes, last]
}

/** The target a stored token was issued for. */
export function targetOf(fields: { tenant: string | undefined; org?: string }): Target {
  if (fields.tenant !== undefined) return { tenant: fields.tenant }
  if (fields.org !== undefined) return { org: fields.org }
  return { none: true }
}

/** The scopes of a stored token without its tenant, organization or no-tenant scope. */
export function plainScopes(scopes: readonly string[]): string[] {
  return scopes.filter((s) => !isSpecial(s))
}
