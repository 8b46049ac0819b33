// A token names the tenant it opens. When a client moves to another tenant,
// or a user leaves a tenant, the tokens (and refresh tokens) issued for the
// tenant left behind end before the change is answered; otherwise they would
// keep opening that tenant's data, from the verified-token cache too, until
// they expire.
import type { AuthServices } from '../services'
import type { GrantFields } from '../models/auth-store'

async function endGrants(s: AuthServices, which: (r: GrantFields) => boolean): Promise<void> {
  await s.oauth.refreshTokens.revokeWhere(which)
  await s.tokens.revokeWhere(which)
}

/** After a client's tenant changed from `before` to `after`. */
export async function endTokensOfClientTenant(s: AuthServices, clientId: string, before: string, after: string): Promise<void> {
  if (before === after) return
  await endGrants(s, (r) => r.client === clientId && r.tenant === before)
}

/** After a user's tenants changed: the tokens for each tenant the user is no longer in. */
export async function endTokensOfLeftTenants(s: AuthServices, userId: string, before: Record<string, unknown>, after: Record<string, unknown>): Promise<void> {
  const left = new Set(Object.keys(before).filter((t) => !Object.prototype.hasOwnProperty.call(after, t)))
  if (left.size === 0) return
  await endGrants(s, (r) => r.sub === userId && r.tenant !== undefined && left.has(r.tenant))
}
