// Bearer token checks, all here: the one every graph call starts with (a
// live token, the scope the endpoint needs, the token's tenant equal to the
// path's tenant), and the ones of the admin API, /userinfo and /refreshtokens.
import { ApiError } from '../../core/errors'
import type { AccessTokenRecord } from '../models/auth-store'
import type { AccessTokens } from '../models/access-tokens'

export const VIEW_SCOPE = 'platform.profile_graph_view'
export const MANAGE_SCOPE = 'platform.profile_graph_manage'

export function bearerToken(authorization: string): string | undefined {
  if (authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return undefined
  const token = authorization.slice(7).trim()
  return token === '' ? undefined : token
}

/** The bearer token of `authorization` and its live record; 401 without one. */
export function liveBearer(tokens: AccessTokens, authorization: string): { token: string; record: AccessTokenRecord } {
  const token = bearerToken(authorization)
  return { token: requireBearer(token), record: requireLive(token === undefined ? undefined : tokens.verify(token)) }
}

/** 401 without a bearer token. */
export function requireBearer(token: string | undefined): string {
  if (token === undefined) {
    throw new ApiError('insufficient_credentials', 'an access token is required: Authorization: Bearer <ACCESS_TOKEN>', {
      headers: { 'www-authenticate': 'Bearer' },
    })
  }
  return token
}

/** 401 unless the token's record is live (verified here, or by the authorization service's owner in a cluster). */
export function requireLive(record: AccessTokenRecord | undefined): AccessTokenRecord {
  if (record === undefined) {
    throw new ApiError('insufficient_credentials', 'the access token is invalid, expired or revoked', {
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    })
  }
  return record
}

export function insufficientScope(scope: string): ApiError {
  return new ApiError('insufficient_scope', `the access token lacks the scope ${scope}`, {
    headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
  })
}

/** A live token with `scope`, whatever its tenant (the admin API). */
export function requireScope(tokens: AccessTokens, authorization: string, scope: string): AccessTokenRecord {
  const { record } = liveBearer(tokens, authorization)
  if (!record.scopes.includes(scope)) throw insufficientScope(scope)
  return record
}

/**
 * With `allowSubject`, a user token (one with a `sub`) of the tenant passes
 * without the scope: the route then acts for that end customer only (the
 * consent routes check the consent's subject).
 */
export function authorize(tokens: AccessTokens, authorization: string, scope: string, tenant: string, allowSubject = false): AccessTokenRecord {
  return permits(liveBearer(tokens, authorization).record, scope, tenant, allowSubject)
}

/** authorize()'s checks of a live record: the scope (or a user token with `allowSubject`) and the tenant. */
export function permits(record: AccessTokenRecord, scope: string, tenant: string, allowSubject = false): AccessTokenRecord {
  if (!record.scopes.includes(scope) && !(allowSubject && record.sub !== undefined)) {
    throw insufficientScope(scope)
  }
  if (record.tenant !== tenant) {
    throw new ApiError('forbidden', `the access token is not valid for tenant "${tenant}"`)
  }
  return record
}
