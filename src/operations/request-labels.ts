// What the access log, the metrics and the audit log call a request: the
// route template (never the raw path, which can hold a consent reference)
// and, for changes, the audit action.
import type { AccessTokenRecord } from '../auth/models/auth-store'
import type { PendingAudit } from '../front/access-log'

/** `/graph/v1/:tenant/nodes/:ns/:type/:id`: the route table's pattern under the tenant. */
export function graphTemplate(pattern: string): string {
  return `/graph/v1/:tenant/${pattern}`
}

export function oauthTemplate(pattern: string): string {
  return `/oauth2/v1/${pattern}`
}

const VERB: Record<string, string> = { POST: 'create', PUT: 'update', DELETE: 'delete' }
/** Admin calls whose POST is a rotation, not a creation. */
const ROTATIONS: Record<string, string> = { 'admin/signing-keys': 'signing_key.rotate', 'admin/clients/:id/secret': 'admin.clients.secret.rotate' }

/** Who: the token's client and user. */
export function actorOf(token: AccessTokenRecord): { client: string | undefined; subject: string | undefined } {
  return { client: token.client, subject: token.sub }
}

/** A change through the admin API (`admin.clients.update` ...) naming the records by their ids; undefined for reads. */
export function adminAudit(pattern: string, method: string, captures: Readonly<Record<string, string>>, token: AccessTokenRecord): PendingAudit | undefined {
  const params = Object.values(captures)
  const verb = VERB[method]
  if (verb === undefined || !pattern.startsWith('admin/')) return undefined
  const names = pattern.split('/').slice(1).filter((p) => !p.startsWith(':'))
  const action = (method === 'POST' ? ROTATIONS[pattern] : undefined) ?? `admin.${names.join('.')}.${verb}`
  return { action, who: actorOf(token), what: params.length > 0 ? { ids: params } : {} }
}

const CONSENT_ACTION: Record<string, string> = {
  'POST consents': 'consent.create',
  'DELETE consents/:ref': 'consent.revoke',
  'POST consents/:ref/grant': 'consent.grant',
  'PUT consents/:ref/revokedProperties': 'consent.revokedProperties',
}

/** A change of a consent; its reference is never named (it is the secret the end customer holds). */
export function consentAudit(pattern: string, method: string, tenant: string, token: AccessTokenRecord): PendingAudit | undefined {
  const action = CONSENT_ACTION[`${method} ${pattern}`]
  return action === undefined ? undefined : { action, who: actorOf(token), what: { tenant } }
}
