// What the access log, the metrics and the audit log call a request: the
// route template (never the raw path, which can hold a consent reference)
// and, for changes, the audit action.
import type { AccessTokenRecord } from '../auth/models/auth-store'
import type { PendingAudit } from '../front/access-log'
import type { GraphRoute } from '../graph/routes'

/** `/graph/v1/:tenant/nodes/:1/:2/:3`, with the pinned segments (`grant`, `stream` ...) spelled out. */
export function graphTemplate(route: GraphRoute): string {
  const rest = Array.from({ length: route.arity }, (_, i) => `:${i + 1}`)
  if (route.first !== undefined && route.arity > 0) rest[0] = route.first
  if (route.last !== undefined && route.arity > 0) rest[route.arity - 1] = route.last
  return ['/graph/v1/:tenant', route.resource, ...rest].join('/')
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
export function adminAudit(pattern: string, method: string, params: readonly string[], token: AccessTokenRecord): PendingAudit | undefined {
  const verb = VERB[method]
  if (verb === undefined || !pattern.startsWith('admin/')) return undefined
  const names = pattern.split('/').slice(1).filter((p) => !p.startsWith(':'))
  const action = (method === 'POST' ? ROTATIONS[pattern] : undefined) ?? `admin.${names.join('.')}.${verb}`
  return { action, who: actorOf(token), what: params.length > 0 ? { ids: params } : {} }
}

const CONSENT_ACTION: Record<string, string> = { 'POST 0': 'consent.create', 'DELETE 1': 'consent.revoke', 'POST 2': 'consent.grant', 'PUT 2': 'consent.revokedProperties' }

/** A change of a consent; its reference is never named (it is the secret the end customer holds). */
export function consentAudit(route: GraphRoute, method: string, tenant: string, token: AccessTokenRecord): PendingAudit | undefined {
  if (route.resource !== 'consents') return undefined
  const action = CONSENT_ACTION[`${method} ${route.arity}`]
  return action === undefined ? undefined : { action, who: actorOf(token), what: { tenant } }
}
