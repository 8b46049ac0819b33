// The one error helper: every failure a client can cause is an ApiError value
// with the status and type of the table in docs/manual/errors.md (which
// test/unit/repository/docs.test.ts keeps equal to this file); the front thread turns it
// into the JSON body {status, message, type, moreInfo}.

/**
 * Every error type a client can meet: its status and what it means (served
 * at GET /errors). The one table; ErrorType, ApiError's status and
 * ERROR_TYPES derive from it. Its order is the order GET /errors lists.
 */
export const ERRORS = {
  bad_request: { status: 400, meaning: 'Malformed JSON, a JSON body over MAX_JSON_DEPTH or MAX_JSON_ELEMENTS, wrong body shape, bad query, bad header value or bad path segment.' },
  validation_violation: { status: 400, meaning: 'Reserved property name, undeclared type or property, or q on a property that is not searchable.' },
  insufficient_credentials: { status: 401, meaning: 'Missing, invalid, expired or revoked access token, or wrong client credentials.' },
  insufficient_scope: { status: 403, meaning: 'The access token lacks the scope the endpoint needs.' },
  forbidden: { status: 403, meaning: "The token's tenant is not the tenant in the path, or the consent reference may not write this element." },
  consent_revoked: { status: 403, meaning: 'The whole consent of the element is revoked.' },
  element_not_found: { status: 404, meaning: 'The element, route or consent does not exist.' },
  method_not_allowed: { status: 405, meaning: 'The route exists but not with this method (see the Allow header).' },
  cursor_expired: { status: 410, meaning: 'The event cursor is older than what is retained.' },
  payload_too_large: { status: 413, meaning: 'The request body is over the configured limit (MAX_BODY).' },
  unsupported_media_type: { status: 415, meaning: 'The body must be JSON (Content-Type: application/json).' },
  too_many_attempts: { status: 400, meaning: 'The account is locked after too many unsuccessful authentication attempts.' },
  too_many_requests: { status: 429, meaning: 'Too many password or client secret checks from this address or for this account; retry after Retry-After seconds.' },
  service_unavailable: { status: 503, meaning: 'A shard queue is full, a shard actor restarted, a shard was stopped after its actor kept failing (see the log), streamed answers hold MAX_STREAM_BUFFER_MB for slow readers, or the server is shutting down; retry after Retry-After seconds.' },
  bad_gateway: { status: 502, meaning: 'The gateway could not reach the service behind it, or the service failed before answering.' },
  gateway_timeout: { status: 504, meaning: 'The service behind the gateway did not answer within GATEWAY_TIMEOUT.' },
  insufficient_storage: { status: 507, meaning: 'The disk of the data directory is full: the write was not applied. Writes succeed again, without a restart, once space is free (retry after Retry-After seconds); reads keep working.' },
  internal_error: { status: 500, meaning: 'A bug; it is logged with the trace id.' },
} as const

export type ErrorType = keyof typeof ERRORS

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
    this.status = ERRORS[type].status
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
export const ERROR_TYPES = Object.fromEntries((Object.keys(ERRORS) as ErrorType[]).map((type) => [type, ERRORS[type].meaning])) as Record<ErrorType, string>

/** A network failure for the operator's log: its code (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT ...) and message; never for a client. */
export function describeCause(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown }
  const text = typeof e.message === 'string' ? e.message : String(err)
  return typeof e.code === 'string' ? `${e.code}: ${text}` : text
}
