// /{tenant}/consents...: consent references (docs/design/contracts.md, Consent). The tenant
// acts with a manage-scope token; the end customer with a user token whose
// `sub` is the consent's subject (checked by the shard actor, which holds it).
import { MANAGE_SCOPE } from '../auth/helpers/bearer'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import { ApiError } from '../core/errors'
import { graphMethod, type GraphHandler } from './services'
import type { ConsentCaller } from '../contract/messages'
import { answer } from '../http/answer'
import { ConsentBody, ConsentParams, ConsentRefParams, PropertyNames } from './params'
import { checkKeyBytes } from '../http/key-length'
import { MAX_ID_BYTES, MAX_PROPERTY_BYTES } from './validate'
import { ConsentView, CreatedConsent, NO_BODY } from './answers'
import type { Answers } from '../http/route'

function caller(token: AccessTokenRecord): ConsentCaller {
  if (token.scopes.includes(MANAGE_SCOPE) || token.sub === undefined) return { kind: 'tenant' }
  return { kind: 'subject', sub: token.sub }
}

export const createConsent = graphMethod({
  body: 'json',
  json: ConsentBody,
  answers: { 201: CreatedConsent },
  errors: ['insufficient_storage'],
  summary: 'Create a consent reference for an end customer',
  handle(s, ex, { tenant, token, body: { subject } }) {
    if (Buffer.byteLength(subject) > MAX_ID_BYTES) throw new ApiError('bad_request', `subject is longer than ${MAX_ID_BYTES} bytes`)
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, consentSubject: subject }
    s.pool.call(tenant, { op: 'createConsent', tenant, subject, client: token.client }, answer(ex))
  },
})

/** The bodiless calls on one consent reference: read, revoke, grant again. */
function onConsent(op: 'getConsent' | 'revokeConsent' | 'grantConsent', answers: Answers, summary: string): GraphHandler {
  return graphMethod({
    body: 'none',
    params: ConsentParams,
    answers,
    errors: ['element_not_found', 'forbidden', 'insufficient_storage'],
    summary,
    handle(s, ex, { tenant, params: { ref }, token }) {
      s.pool.call(tenant, { op, tenant, ref, caller: caller(token) }, answer(ex))
    },
  })
}

export const getConsent = onConsent('getConsent', { 200: ConsentView }, 'Read a consent')
export const revokeConsent = onConsent('revokeConsent', { 204: NO_BODY }, 'Revoke a whole consent')
export const grantConsent = onConsent('grantConsent', { 204: NO_BODY }, 'Grant a revoked consent again')

export const setRevokedProperties = graphMethod({
  body: 'json',
  params: ConsentRefParams,
  json: PropertyNames,
  answers: { 204: NO_BODY },
  errors: ['element_not_found', 'forbidden', 'insufficient_storage'],
  summary: 'Set the properties a consent no longer covers',
  handle(s, ex, { tenant, params, token, body: names }) {
    if (!names.every((n) => Buffer.byteLength(n) <= MAX_PROPERTY_BYTES)) throw new ApiError('bad_request', 'the body must be a JSON array of property names')
    // The reference is checked after the body, as this route always did.
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, revokedProperties: names }
    const ref = checkKeyBytes('consent reference', params.ref, MAX_ID_BYTES)
    s.pool.call(tenant, { op: 'setRevokedProperties', tenant, ref, names, caller: caller(token) }, answer(ex))
  },
})
