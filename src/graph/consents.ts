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

function caller(token: AccessTokenRecord): ConsentCaller {
  if (token.scopes.includes(MANAGE_SCOPE) || token.sub === undefined) return { kind: 'tenant' }
  return { kind: 'subject', sub: token.sub }
}

export const createConsent = graphMethod({
  body: 'json',
  json: ConsentBody,
  status: 201,
  summary: 'Create a consent reference for an end customer',
  handle(s, ex, { tenant, body: { subject } }) {
    if (Buffer.byteLength(subject) > MAX_ID_BYTES) throw new ApiError('bad_request', `subject is longer than ${MAX_ID_BYTES} bytes`)
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, consentSubject: subject }
    s.pool.call(tenant, { op: 'createConsent', tenant, subject }, answer(ex))
  },
})

/** The bodiless calls on one consent reference: read, revoke, grant again. */
function onConsent(op: 'getConsent' | 'revokeConsent' | 'grantConsent', summary: string): GraphHandler {
  return graphMethod({
    body: 'none',
    params: ConsentParams,
    summary,
    handle(s, ex, { tenant, params: { ref }, token }) {
      s.pool.call(tenant, { op, tenant, ref, caller: caller(token) }, answer(ex))
    },
  })
}

export const getConsent = onConsent('getConsent', 'Read a consent')
export const revokeConsent = onConsent('revokeConsent', 'Revoke a whole consent')
export const grantConsent = onConsent('grantConsent', 'Grant a revoked consent again')

export const setRevokedProperties = graphMethod({
  body: 'json',
  params: ConsentRefParams,
  json: PropertyNames,
  summary: 'Set the properties a consent no longer covers',
  handle(s, ex, { tenant, params, token, body: names }) {
    if (!names.every((n) => Buffer.byteLength(n) <= MAX_PROPERTY_BYTES)) throw new ApiError('bad_request', 'the body must be a JSON array of property names')
    // The reference is checked after the body, as this route always did.
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, revokedProperties: names }
    const ref = checkKeyBytes('consent reference', params.ref, MAX_ID_BYTES)
    s.pool.call(tenant, { op: 'setRevokedProperties', tenant, ref, names, caller: caller(token) }, answer(ex))
  },
})
