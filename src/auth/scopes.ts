// Scope rules of the authorization spec (sections 4 and 5.7) for grants
// without a user: the tenant comes from platform.tenant=<t> (or the client's
// parent tenant when absent or platform.no_tenant); a foreign tenant must be
// subscribed to a package of the client's tenant; the other scopes are what
// was asked, limited by what the client may have and the tenant subscribed to.
import { ApiError } from '../errors'
import type { AuthStore, ClientRecord } from './auth-store'

export const TENANT_SCOPE = 'platform.tenant='
export const ORG_SCOPE = 'platform.org='
export const NO_TENANT_SCOPE = 'platform.no_tenant'

export const invalidScope = (description: string): ApiError =>
  new ApiError('bad_request', description, { oauth: { error: 'invalid_scope', error_description: description } })

export interface Grant {
  tenant: string
  scopes: string[]
}

export function splitScope(scope: string | null): string[] {
  return (scope ?? '').split(' ').filter((s) => s !== '')
}

/** Scopes the tenant's subscriptions give it to services of `provider`. */
function subscribedScopes(store: AuthStore, tenant: string, provider: string): Set<string> | undefined {
  let found = false
  const scopes = new Set<string>()
  for (const { value: sub } of store.subscriptions.getRange()) {
    if (sub.tenant !== tenant) continue
    const pkg = store.packages.get(sub.package)
    if (pkg === undefined || pkg.provider.id !== provider) continue
    found = true
    for (const service of pkg.includedServices) for (const s of service.scopes) scopes.add(s)
  }
  return found ? scopes : undefined
}

export function clientCredentialsGrant(store: AuthStore, client: ClientRecord, scopeParam: string | null): Grant {
  const requested = splitScope(scopeParam)
  const tenantScopes = requested.filter((s) => s.startsWith(TENANT_SCOPE))
  if (requested.some((s) => s.startsWith(ORG_SCOPE))) throw invalidScope('platform.org is not supported for this grant')
  if (tenantScopes.length > 1) throw invalidScope('only one platform.tenant scope may be requested')
  if (tenantScopes.length === 1 && requested.includes(NO_TENANT_SCOPE)) {
    throw invalidScope('platform.tenant cannot be combined with platform.no_tenant')
  }
  const tenant = tenantScopes.length === 1 ? tenantScopes[0]!.slice(TENANT_SCOPE.length) : client.tenant
  if (tenant === '') throw invalidScope('platform.tenant needs a tenant id')
  let allowed = new Set(client.scopes)
  if (tenant !== client.tenant) {
    const subscribed = subscribedScopes(store, tenant, client.tenant)
    if (subscribed === undefined) {
      throw invalidScope(`tenant "${tenant}" has no subscription to the services of tenant "${client.tenant}"`)
    }
    allowed = new Set([...allowed].filter((s) => subscribed.has(s)))
  }
  const asked = requested.filter((s) => !s.startsWith(TENANT_SCOPE) && s !== NO_TENANT_SCOPE)
  const scopes = asked.length === 0 ? [...allowed] : asked.filter((s) => allowed.has(s))
  return { tenant, scopes: [...new Set(scopes)] }
}

export function scopeString(grant: Grant): string {
  return [...grant.scopes, `${TENANT_SCOPE}${grant.tenant}`].join(' ')
}
