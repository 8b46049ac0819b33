// One request carried as a line of another's body (a bulk request): an
// Exchange read from the line instead of uWebSockets.js's request, whose
// answer is handed back as JSON text for the carrying exchange to write.
// The routes' handlers and the dispatcher run on it unchanged, so a line is
// answered exactly as the single request it stands for.
import { ApiError, errorBody } from '../core/errors'
import { auditFinished } from './access-log'
import { Exchange, type RequestSource, type ResponseHeaders } from './exchange'

/** A line's answer: its status and, as JSON text, its body (a success) or its error body. */
export interface LineAnswer {
  status: number
  body?: string
  error?: string
}

/** What a line asks for: a method, a path under the carrying request's service prefix (with its query, if any) and its headers. */
export interface LineRequest {
  method: string
  path: string
  headers: readonly (readonly [string, string])[]
}

const JSON_MEDIA = 'application/json'

/** An error as a line's answer, with the body the single request's answer would carry. */
export const lineError = (apiError: ApiError, publicUrl: string): LineAnswer =>
  ({ status: apiError.status, error: JSON.stringify(errorBody(apiError, publicUrl)) })

/** The line as uWebSockets.js's request would present it: lower-case method, path and query apart, headers by lower-case name. */
function sourceOf(prefix: string, line: LineRequest): RequestSource {
  const q = line.path.indexOf('?')
  const url = prefix + (q < 0 ? line.path : line.path.slice(0, q))
  const query = q < 0 ? '' : line.path.slice(q + 1)
  return {
    getMethod: () => line.method.toLowerCase(),
    getUrl: () => url,
    getQuery: () => query,
    forEach: (cb: (key: string, value: string) => void) => {
      for (const [name, value] of line.headers) cb(name.toLowerCase(), value)
    },
  }
}

export class LineExchange extends Exchange {
  /**
   * `prefix`: the path every line's path is under ("/graph/v1/{tenant}/"),
   * as sent (still percent-encoded); `deliver` gets the line's one answer.
   */
  constructor(carrier: Exchange, prefix: string, line: LineRequest, private readonly deliver: (answer: LineAnswer) => void) {
    super(carrier.res, sourceOf(prefix, line), carrier.publicUrl)
    this.span = carrier.span
  }

  /** The carrying exchange is the one in flight and watching its client. */
  protected override track(): boolean {
    return false
  }

  /** No access line or metric per line (the carrying request has them); an audit still is written. */
  protected override ended(status: number): void {
    auditFinished(this, status)
  }

  protected override writeAnswer(status: number, contentType: string | Buffer, body: string | Uint8Array): void {
    const text = typeof body === 'string' ? body : Buffer.from(body).toString()
    const isJson = (typeof contentType === 'string' ? contentType : contentType.toString()) === JSON_MEDIA
    this.deliver({ status, body: isJson ? text : JSON.stringify(text) })
  }

  protected override writeEmpty(status: number, _headers: ResponseHeaders | undefined): void {
    this.deliver({ status })
  }

  protected override writeError(apiError: ApiError): void {
    this.deliver(lineError(apiError, this.publicUrl))
  }
}
