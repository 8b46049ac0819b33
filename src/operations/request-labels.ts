// What the access log, the metrics and the audit log call a request: the
// route template (never the raw path, which can hold a consent reference)
// and, for changes, the audit action.
import type { AccessTokenRecord } from '../auth/models/auth-store'
import type { PendingAudit } from '../http/access-log'

/**
 * A template per route-table pattern, built once: a string built per request
 * costs its flattening and hashing again in every Map the access log and the
 * metrics look it up in (bench/MEASUREMENTS.md, "Table: 2026-11-23, full
 * settings, quiet machine, three runs", "The access log's cost").
 */
function memo(prefix: string): (pattern: string) => string {
  const templates = new Map<string, string>()
  return (pattern) => {
    let template = templates.get(pattern)
    if (template === undefined) templates.set(pattern, (template = `${prefix}${pattern}`))
    return template
  }
}

/** `/graph/v1/:tenant/nodes/:ns/:type/:id`: the route table's pattern under the tenant. */
export const graphTemplate = memo('/graph/v1/:tenant/')

export const oauthTemplate = memo('/oauth2/v1/')

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

const GRAPH_ACTION: Record<string, string> = {
  'POST consents': 'consent.create',
  'DELETE consents/:ref': 'consent.revoke',
  'POST consents/:ref/grant': 'consent.grant',
  'PUT consents/:ref/revokedProperties': 'consent.revokedProperties',
  // The whole tenant in plaintext out, or a batch of it in: who moved a tenant's data, and when.
  'GET export': 'tenant.export',
  'POST import': 'tenant.import',
  // A data subject's data out in plaintext, or all of their consents revoked.
  'GET subject/export': 'subject.export',
  'DELETE subject': 'subject.erase',
}

/** A change of a consent (its reference is never named: it is the secret the end customer holds), a tenant's export or import, or a data subject's export or erasure. */
export function graphAudit(pattern: string, method: string, tenant: string, token: AccessTokenRecord): PendingAudit | undefined {
  // Most calls are not audited: no key is built for them.
  if (!pattern.startsWith('consents') && !pattern.startsWith('subject') && pattern !== 'export' && pattern !== 'import') return undefined
  const action = GRAPH_ACTION[`${method} ${pattern}`]
  if (action === undefined) return undefined
  // An export cut short has still handed out data.
  return { action, who: actorOf(token), what: { tenant }, evenIfCut: pattern === 'export' || pattern === 'subject/export' ? true : undefined }
}
