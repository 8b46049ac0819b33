// The service's errors as values: every failed call throws a
// ProfileGraphError carrying the status, the error type (one of GET /errors)
// and the message of the service's error body, so callers branch on `type`.
import type { ErrorBody, ErrorType } from './types.js'

export class ProfileGraphError extends Error {
  override readonly name = 'ProfileGraphError'
  /** The HTTP status (0 when the service could not be reached or answered no error body). */
  readonly status: number
  /** The service's error type; `network_error` when there was no answer, `bad_answer` when it was not the service's error body. */
  readonly type: ErrorType | 'network_error' | 'bad_answer'
  /** Where the type is explained (the service's moreInfo). */
  readonly moreInfo: string | undefined
  /** The OAuth error code (RFC 6749) of an OAuth endpoint's error. */
  readonly oauthError: string | undefined
  /** The seconds the service asked to wait (Retry-After), when it did. */
  readonly retryAfter: number | undefined

  constructor(fields: { status: number; type: ProfileGraphError['type']; message: string; moreInfo?: string; oauthError?: string; retryAfter?: number; cause?: unknown }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.status = fields.status
    this.type = fields.type
    this.moreInfo = fields.moreInfo
    this.oauthError = fields.oauthError
    this.retryAfter = fields.retryAfter
  }
}

/** True when `e` is the service's error, of `type` if given. */
export function isProfileGraphError(e: unknown, type?: ProfileGraphError['type']): e is ProfileGraphError {
  return e instanceof ProfileGraphError && (type === undefined || e.type === type)
}

function isErrorBody(v: unknown): v is ErrorBody {
  if (typeof v !== 'object' || v === null) return false
  const o = v as Record<string, unknown>
  return typeof o['status'] === 'number' && typeof o['type'] === 'string' && typeof o['message'] === 'string'
}

/** Seconds from a Retry-After header (delta-seconds or an HTTP date), if it names a wait. */
export function retryAfterSeconds(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed)
  const at = Date.parse(trimmed)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

/** The error a failed answer stands for: its error body when it has one, else its status. */
export function errorOf(status: number, text: string, retryAfterHeader: string | null): ProfileGraphError {
  const retryAfter = retryAfterSeconds(retryAfterHeader)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  if (!isErrorBody(body)) {
    return new ProfileGraphError({ status, type: 'bad_answer', message: `HTTP ${status}: ${text.slice(0, 200)}`, retryAfter })
  }
  return new ProfileGraphError({ status, type: body.type, message: body.message, moreInfo: body.moreInfo, oauthError: body.error, retryAfter })
}

/** A body-level error (a bulk line's, a stream's) as a ProfileGraphError. */
export function errorOfBody(body: unknown, status: number): ProfileGraphError {
  return isErrorBody(body)
    ? new ProfileGraphError({ status: body.status, type: body.type, message: body.message, moreInfo: body.moreInfo })
    : new ProfileGraphError({ status, type: 'bad_answer', message: `status ${status}: ${JSON.stringify(body)?.slice(0, 200)}` })
}
