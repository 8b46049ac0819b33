// The one error helper: every failure a client can cause is an ApiError value
// with the status and type of the table in docs/contracts.md (which
// test/unit/docs.test.ts keeps equal to this file); the front thread turns it
// into the JSON body {status, message, type, moreInfo}.

export type ErrorType =
  | 'bad_request'
  | 'validation_violation'
  | 'insufficient_credentials'
  | 'insufficient_scope'
  | 'forbidden'
  | 'consent_revoked'
  | 'element_not_found'
  | 'method_not_allowed'
  | 'cursor_expired'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'too_many_attempts'
  | 'too_many_requests'
  | 'service_unavailable'
  | 'insufficient_storage'
  | 'internal_error'

const STATUS_OF: Record<ErrorType, number> = {
  bad_request: 400,
  validation_violation: 400,
  insufficient_credentials: 401,
  insufficient_scope: 403,
  forbidden: 403,
  consent_revoked: 403,
  element_not_found: 404,
  method_not_allowed: 405,
  cursor_expired: 410,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_attempts: 400,
  too_many_requests: 429,
  service_unavailable: 503,
  insufficient_storage: 507,
  internal_error: 500,
}

/** Extra fields an OAuth endpoint adds beside the platform's (RFC 6749 section 5.2). */
export interface OAuthErrorFields {
  error: string
  error_description: string
}

export class ApiError extends Error {
  readonly status: number
  readonly type: ErrorType
  readonly oauth: OAuthErrorFields | undefined
  readonly headers: Readonly<Record<string, string>>

  constructor(type: ErrorType, message: string, options: { oauth?: OAuthErrorFields; headers?: Record<string, string> } = {}) {
    super(message)
    this.type = type
    this.status = STATUS_OF[type]
    this.oauth = options.oauth
    this.headers = options.headers ?? {}
  }
}

export interface ErrorBody {
  status: number
  message: string
  type: ErrorType
  moreInfo: string
  error?: string
  error_description?: string
}

/** The wire shape of an error; `moreInfo` points at GET /errors, which serves ERROR_TYPES. */
export function errorBody(err: ApiError, publicUrl: string): ErrorBody {
  const body: ErrorBody = {
    status: err.status,
    message: err.message,
    type: err.type,
    moreInfo: `${publicUrl}/errors#${err.type}`,
  }
  if (err.oauth !== undefined) {
    body.error = err.oauth.error
    body.error_description = err.oauth.error_description
  }
  return body
}

/** What every error type means, served at GET /errors so `moreInfo` leads somewhere. */
export const ERROR_TYPES: Record<ErrorType, string> = {
  bad_request: 'Malformed JSON, a JSON body over MAX_JSON_DEPTH or MAX_JSON_ELEMENTS, wrong body shape, bad query, bad header value or bad path segment.',
  validation_violation: 'Reserved property name, undeclared type or property, or q on a property that is not searchable.',
  insufficient_credentials: 'Missing, invalid, expired or revoked access token, or wrong client credentials.',
  insufficient_scope: 'The access token lacks the scope the endpoint needs.',
  forbidden: "The token's tenant is not the tenant in the path, or the consent reference may not write this element.",
  consent_revoked: 'The whole consent of the element is revoked.',
  element_not_found: 'The element, route or consent does not exist.',
  method_not_allowed: 'The route exists but not with this method (see the Allow header).',
  cursor_expired: 'The event cursor is older than what is retained.',
  payload_too_large: 'The request body is over the configured limit (MAX_BODY).',
  unsupported_media_type: 'The body must be JSON (Content-Type: application/json).',
  too_many_attempts: 'The account is locked after too many unsuccessful authentication attempts.',
  too_many_requests: 'Too many password or client secret checks from this address or for this account; retry after Retry-After seconds.',
  service_unavailable: 'A shard queue is full, a shard actor restarted, a shard was stopped after its actor kept failing (see the log), or the server is shutting down; retry after Retry-After seconds.',
  insufficient_storage: 'The disk of the data directory is full: the write was not applied. Writes succeed again, without a restart, once space is free; reads keep working.',
  internal_error: 'A bug; it is logged with the trace id.',
}
