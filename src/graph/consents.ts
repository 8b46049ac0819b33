// /{tenant}/consents...: consent references (docs/contracts.md, Consent). The tenant
// acts with a manage-scope token; the end customer with a user token whose
// `sub` is the consent's subject (checked by the shard actor, which holds it).
import { MANAGE_SCOPE } from '../auth/helpers/bearer'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import { ApiError } from '../errors'
import type { GraphHandler } from './services'
import type { ConsentCaller } from '../contract/messages'
import { answer } from '../front/answer'
import type { GraphParams } from './params'
import { checkKeyBytes } from '../front/key-length'
import { parseJson } from '../front/parse-json'
import { MAX_ID_BYTES, MAX_PROPERTY_BYTES } from './validate'

type Spec = GraphHandler<GraphParams>

function caller(token: AccessTokenRecord): ConsentCaller {
  if (token.scopes.includes(MANAGE_SCOPE) || token.sub === undefined) return { kind: 'tenant' }
  return { kind: 'subject', sub: token.sub }
}

function ref(rest: string[]): string {
  const r = rest[0]!
  return checkKeyBytes('consent reference', r, MAX_ID_BYTES)
}

export const createConsent: Spec = {
  body: 'json',
  handle(s, ex, { tenant }, body) {
    const doc = parseJson(body!)
    const subject = (doc as { subject?: unknown } | null)?.subject
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || typeof subject !== 'string' || subject.trim() === '') {
      throw new ApiError('bad_request', 'the body must be {"subject": "<the end customer\'s id>"}')
    }
    if (Buffer.byteLength(subject) > MAX_ID_BYTES) throw new ApiError('bad_request', `subject is longer than ${MAX_ID_BYTES} bytes`)
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, consentSubject: subject }
    s.pool.call(tenant, { op: 'createConsent', tenant, subject }, answer(ex))
  },
}

/** The bodiless calls on one consent reference: read, revoke, grant again. */
function onConsent(op: 'getConsent' | 'revokeConsent' | 'grantConsent'): Spec {
  return {
    body: 'none',
    handle(s, ex, { tenant, rest, token }) {
      s.pool.call(tenant, { op, tenant, ref: ref(rest), caller: caller(token) }, answer(ex))
    },
  }
}

export const getConsent = onConsent('getConsent')
export const revokeConsent = onConsent('revokeConsent')
export const grantConsent = onConsent('grantConsent')

export const setRevokedProperties: Spec = {
  body: 'json',
  handle(s, ex, { tenant, rest, token }, body) {
    const names = parseJson(body!)
    if (!Array.isArray(names) || !names.every((n): n is string => typeof n === 'string' && n !== '' && Buffer.byteLength(n) <= MAX_PROPERTY_BYTES)) {
      throw new ApiError('bad_request', 'the body must be a JSON array of property names')
    }
    if (ex.audit !== undefined) ex.audit.what = { ...ex.audit.what, revokedProperties: names }
    s.pool.call(tenant, { op: 'setRevokedProperties', tenant, ref: ref(rest), names, caller: caller(token) }, answer(ex))
  },
}
