// OAuth error answers (RFC 6749 5.2): `error` and `error_description` beside
// the platform's status, message, type and moreInfo.
import { ApiError, type ErrorType } from '../../core/errors'

export function oauthError(error: string, description: string, type: ErrorType = 'bad_request', headers?: Record<string, string>): ApiError {
  return new ApiError(type, description, { oauth: { error, error_description: description }, headers })
}

export const invalidRequest = (description: string): ApiError => oauthError('invalid_request', description)
export const invalidGrant = (description: string): ApiError => oauthError('invalid_grant', description)
export const unauthorizedClient = (description: string): ApiError => oauthError('unauthorized_client', description)
export const invalidToken = (description: string): ApiError =>
  oauthError('invalid_token', description, 'insufficient_credentials', { 'www-authenticate': `Bearer error="invalid_token"` })

/** A parameter that must appear at most once (RFC 6749 3.1, 3.2). */
export function single(params: URLSearchParams, name: string): string | undefined {
  const all = params.getAll(name)
  if (all.length > 1) throw invalidRequest(`${name} must be given once`)
  return all[0]
}
