// A data subject's own routes (docs/manual/graph-api.md, "A data subject's
// own consents and data"): GET consents lists the subject's consents, GET
// subject/export streams everything their granted consents hold, DELETE
// subject revokes them all. A user token acts on its own `sub`; a
// manage-scope token names the subject with `?subject=`. The shard actor
// reads only the subject's index entries, so nobody reaches another
// subject's consents through these routes.
import { Type } from '@sinclair/typebox'
import { MANAGE_SCOPE } from '../auth/helpers/bearer'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import type { SubjectAccount } from '../auth/models/subject-account'
import { ApiError } from '../core/errors'
import { answer } from '../http/answer'
import type { Exchange } from '../http/exchange'
import { checkKeyBytes } from '../http/key-length'
import { streamFormat, streamScan } from '../http/stream'
import { wrapping } from '../shards/reply-handler'
import { ConsentList, NO_BODY, SubjectExport } from './answers'
import { revokeAll } from './revoke-all'
import { SubjectConsentsQuery, SubjectQuery } from './params'
import { graphMethod } from './services'
import { limitParam, MAX_ID_BYTES } from './validate'

/** The subject a call acts on: the one `?subject=` names (the manage scope, or the token's own `sub`), else the token's `sub`. */
export function subjectOf(token: AccessTokenRecord, named: string | undefined): string {
  if (named === undefined) {
    if (token.sub !== undefined) return token.sub
    throw new ApiError('bad_request', 'name the subject with ?subject=<id>: a client token has no subject of its own')
  }
  if (named === '') throw new ApiError('bad_request', 'subject must not be empty')
  checkKeyBytes('subject', named, MAX_ID_BYTES)
  if (named !== token.sub && !token.scopes.includes(MANAGE_SCOPE)) {
    throw new ApiError('forbidden', `only a token with ${MANAGE_SCOPE} may name another subject than its own`)
  }
  return named
}

/** The audit line names the subject (never a consent reference: those are the subject's secrets). */
function auditSubject(ex: Exchange, subject: string): void {
  if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, subject }
}

export const listSubjectConsents = graphMethod({
  body: 'none',
  query: SubjectConsentsQuery,
  answers: { 200: ConsentList },
  errors: ['forbidden'],
  summary: "List a subject's consents (a user token: its own)",
  handle(s, ex, { tenant, token, query }) {
    const subject = subjectOf(token, query.subject)
    const limit = limitParam(query.limit ?? null)
    const after = query.after === undefined ? undefined : checkKeyBytes('after', query.after, MAX_ID_BYTES)
    s.pool.call(tenant, { op: 'listConsents', tenant, subject, after, limit }, answer(ex))
  },
})

/**
 * What the export shows of the subject's account: nothing unless the user
 * belongs to this tenant (a tenant learns nothing of other tenants' users),
 * and the user's other tenants only to the user themself.
 */
function accountShown(account: SubjectAccount | null, tenant: string, bySubject: boolean): SubjectAccount | null {
  if (account === null || !Object.prototype.hasOwnProperty.call(account.tenants, tenant)) return null
  return bySubject ? account : { ...account, tenants: { [tenant]: account.tenants[tenant]! } }
}

export const exportSubject = graphMethod({
  body: 'none',
  query: SubjectQuery,
  headers: Type.Object({ accept: Type.Optional(Type.String({ description: 'application/x-ndjson: one element per line' })) }),
  answers: { 200: SubjectExport },
  errors: ['forbidden'],
  summary: "Everything stored under a subject's granted consents, decrypted (streamed; JSON array or NDJSON)",
  handle(s, ex, { tenant, token, query }) {
    const subject = subjectOf(token, query.subject)
    auditSubject(ex, subject)
    const account = accountShown(s.account(subject), tenant, token.sub === subject)
    const head = JSON.stringify({ kind: 'subject', subject, tenant, account })
    const format = streamFormat(ex.headers.accept)
    streamScan(ex, format, s.streamBuffers, (onReply) => s.pool.openStream(tenant, { op: 'exportSubject', tenant, subject, head, format }, onReply))
  },
})

export const eraseSubject = graphMethod({
  body: 'none',
  query: SubjectQuery,
  answers: { 204: NO_BODY },
  errors: ['forbidden', 'insufficient_storage'],
  summary: "Revoke every consent of a subject in the tenant (each as DELETE consents/{ref})",
  handle(s, ex, { tenant, token, query }) {
    const subject = subjectOf(token, query.subject)
    auditSubject(ex, subject)
    const done = answer(ex)
    s.pool.call(tenant, { op: 'listConsents', tenant, subject, after: undefined, limit: undefined }, wrapping(done, (reply) => {
      if (reply.kind !== 'ok' || reply.body === undefined) {
        done(reply)
        return
      }
      const granted = (JSON.parse(reply.body) as { consentReference: string; status: string }[]).filter((c) => c.status === 'granted').map((c) => c.consentReference)
      // The revocations carry no `abandoned`: a client that leaves does not stop an erasure half-way.
      revokeAll(granted, (ref, revoked) => s.pool.call(tenant, { op: 'revokeConsent', tenant, ref, caller: { kind: 'subject', sub: subject } }, revoked), done)
    }))
  },
})
