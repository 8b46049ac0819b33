// One HTTP exchange on the front thread: the uWebSockets.js response plus
// what was copied off the stack-allocated request. Every reply goes through
// here, corked, and nothing is written once the client has gone.
import { STATUS_CODES } from 'node:http'
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { causeOf, DISK_FULL_MESSAGE, DISK_FULL_RETRY_AFTER_SECONDS, isCommitFailure, isDiskFull } from '../core/storage-failure'
import { ApiError, errorBody } from '../core/errors'
import { log } from '../telemetry/log'
import { oauthErrorAnswered } from '../telemetry/metrics'
import { CLIENT_CLOSED, exchangeFinished, type PendingAudit } from './access-log'
import { givenRequestId, idStem, nextIdSeq, REQUEST_ID_HEADER, requestIdBytes, requestIdText, type RequestIdParts } from '../telemetry/request-id'
import { traces, type Span } from '../telemetry/traces'
import { exchangeEnded, exchangeStarted, isDraining } from './in-flight'
import { decodePath, decodeQuery } from './path'
import type { BodyIntake } from './body-intake'

const STATUS_LINE: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content',
  302: '302 Found', 303: '303 See Other',
  400: '400 Bad Request', 401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found',
  405: '405 Method Not Allowed', 410: '410 Gone', 413: '413 Payload Too Large', 415: '415 Unsupported Media Type',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error', 503: '503 Service Unavailable',
}
/**
 * Every status has its reason phrase (a bare code is not a valid status
 * line). Bytes, made once per status: uWebSockets.js copies a string
 * argument through a UTF-8 conversion (a malloc) on every call, bytes it
 * reads in place. The same holds for every constant written below.
 */
const statusLines: (Buffer | undefined)[] = []
const statusLine = (status: number): Buffer =>
  (statusLines[status] ??= Buffer.from(STATUS_LINE[status] ?? `${status} ${STATUS_CODES[status] ?? 'Unknown'}`))

/** A header name or value as bytes, for writing (uWebSockets.js reads bytes in place). */
const bytes = (text: string): Buffer => Buffer.from(text)

/**
 * The request headers the routes read (uWebSockets.js only allows reading
 * them synchronously). One object literal, so every exchange's headers share
 * one shape; absent headers are ''.
 */
const noHeaders = () => ({
  authorization: '',
  'content-type': '',
  'content-length': '',
  accept: '',
  'consent-reference': '',
  'platform-context-trace-id': '',
  cookie: '',
  origin: '',
  'platform-session-id': '',
  'platform-schedule-event-at': '',
  'platform-schedule-event-parameter': '',
  'platform-decay-at': '',
  'platform-decay-parameters': '',
  'x-forwarded-for': '',
  traceparent: '',
  'access-control-request-method': '',
})
export type RequestHeaders = ReturnType<typeof noHeaders>

/** What an exchange reads of its request: uWebSockets.js's request, or one carried in another's body (src/http/line-exchange.ts). */
export type RequestSource = Pick<HttpRequest, 'getMethod' | 'getUrl' | 'getQuery' | 'forEach'>
export type HeaderName = keyof RequestHeaders

const HEADER_BIT = new Map((Object.keys(noHeaders()) as HeaderName[]).map((name, i) => [name as string, 1 << i]))
// What readHeader fills, set by readHeaders: one callback for every request, not a closure each.
let reading = noHeaders()
let seen = 0

/** The first value of each header the routes read (uWebSockets.js hands names in lower case, values decoded as UTF-8). */
function readHeader(name: string, value: string): void {
  const bit = HEADER_BIT.get(name)
  if (bit === undefined || (seen & bit) !== 0) return
  seen |= bit
  reading[name as HeaderName] = value
}

/**
 * One pass over the headers the request has (a client sends a handful):
 * sixteen getHeader calls cost ~0.6 µs a request more here, as each
 * converts its name argument (bench/MEASUREMENTS.md, "The front thread on a
 * faster host: where get-node's time goes, and request headers in one pass,
 * 2026-11-27").
 */
function readHeaders(req: RequestSource): RequestHeaders {
  const headers = noHeaders()
  reading = headers
  seen = 0
  req.forEach(readHeader)
  return headers
}

/** uWebSockets.js gives the method in lower case; the common ones upper-cased without a new string each. */
function upperMethod(method: string): string {
  switch (method) {
    case 'get': return 'GET'
    case 'put': return 'PUT'
    case 'post': return 'POST'
    case 'delete': return 'DELETE'
    case 'head': return 'HEAD'
    case 'options': return 'OPTIONS'
    default: return method.toUpperCase()
  }
}

const CONTENT_TYPE = bytes('content-type')
const JSON_TYPE = bytes('application/json')
const CONNECTION = bytes('connection')
const CLOSE = bytes('close')

/** Response headers; an array value is written once per element (Set-Cookie). */
export type ResponseHeaders = Record<string, string | readonly string[]>

function writeHeaders(res: HttpResponse, headers: ResponseHeaders | undefined): void {
  if (headers === undefined) return
  for (const k in headers) {
    const v = headers[k]!
    if (typeof v === 'string') res.writeHeader(k, v)
    else for (const one of v) res.writeHeader(k, one)
  }
}

export class Exchange implements RequestIdParts {
  aborted = false
  private answered = false
  private counted: boolean
  /** Headers every answer gets, decided when it is written (CORS, src/http/cors.ts). */
  lateHeaders: (() => ResponseHeaders) | undefined
  /** Set by a streaming route: called once if the client goes away. */
  onAbort: (() => void) | undefined
  readonly method: string
  readonly rawPath: string
  readonly rawQuery: string | undefined
  readonly headers: RequestHeaders
  private segmentsCache: string[] | undefined
  private peerCache: string | undefined
  /** The request id, logged with every line of this request and echoed as x-request-id (src/telemetry/request-id.ts). */
  readonly givenId: string
  readonly idSeq: number
  readonly idStem: Buffer
  readonly startedAt = performance.now()
  /** The route template of the access log and metrics, set once the route is found. */
  route = 'unmatched'
  /** The status written (set by each way of answering; a stream's or upgrade's by its route). */
  status = 200
  /** Written as an audit line if the answer is a success. */
  audit: PendingAudit | undefined
  /** A streamed body held by the dispatcher until its route reads it (src/http/body-intake.ts). */
  intake: BodyIntake | undefined
  /** The request's span while traces are on (src/telemetry/traces.ts), ended with the access line; a bulk line's is its request's. */
  span: Span | undefined

  constructor(readonly res: HttpResponse, req: RequestSource, readonly publicUrl: string) {
    this.method = upperMethod(req.getMethod())
    this.rawPath = req.getUrl()
    this.rawQuery = req.getQuery()
    const headers = readHeaders(req)
    this.headers = headers
    this.givenId = givenRequestId(headers['platform-context-trace-id'], headers.traceparent)
    this.idSeq = this.givenId === '' ? nextIdSeq() : 0
    this.idStem = idStem()
    this.counted = this.track()
  }

  /** Counts the exchange in flight and watches for its client going away; returns whether it counted (a line of a bulk body does not). */
  protected track(): boolean {
    exchangeStarted()
    const t = traces
    if (t !== undefined) this.span = t.request(this.method, this.headers.traceparent)
    this.res.onAborted(() => {
      this.aborted = true
      if (!this.answered) exchangeFinished(this, CLIENT_CLOSED)
      this.uncount()
      const cb = this.onAbort
      this.onAbort = undefined
      cb?.()
    })
    return true
  }

  /** The request id as a string (built when asked: the per-request paths write its bytes). */
  get requestId(): string {
    return requestIdText(this)
  }

  /** Set once the answer is complete (or handed to a WebSocket): the exchange is no longer in flight. */
  get finished(): boolean {
    return this.answered
  }

  set finished(value: boolean) {
    if (!value || this.answered) return
    this.answered = true
    this.ended(this.status)
    this.uncount()
  }

  /** The access line, the request metric and a pending audit of the answered exchange. */
  protected ended(status: number): void {
    exchangeFinished(this, status)
  }

  private uncount(): void {
    if (!this.counted) return
    this.counted = false
    exchangeEnded()
  }

  /** Percent-decoded path segments (throws ApiError on bad encoding). */
  get segments(): string[] {
    this.segmentsCache ??= decodePath(this.rawPath)
    return this.segmentsCache
  }

  /** The socket peer's IP address (read when first asked: most routes never need it). */
  get peer(): string {
    this.peerCache ??= this.aborted ? '' : Buffer.from(this.res.getRemoteAddressAsText()).toString()
    return this.peerCache
  }

  get query(): URLSearchParams {
    return decodeQuery(this.rawQuery)
  }

  get open(): boolean {
    return !this.aborted && !this.finished
  }

  /** Writes the late headers; for a route that writes its answer itself (src/http/stream.ts). */
  writeLateHeaders(): void {
    if (this.lateHeaders !== undefined) writeHeaders(this.res, this.lateHeaders())
  }

  json(status: number, body: string, headers?: ResponseHeaders): void {
    this.send(status, JSON_TYPE, body, headers)
  }

  send(status: number, contentType: string | Buffer, body: string | Uint8Array, headers?: ResponseHeaders): void {
    if (!this.open) return
    this.status = status
    this.finished = true
    this.writeAnswer(status, contentType, body, headers)
  }

  protected writeAnswer(status: number, contentType: string | Buffer, body: string | Uint8Array, headers: ResponseHeaders | undefined): void {
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status)).writeHeader(CONTENT_TYPE, contentType).writeHeader(REQUEST_ID_HEADER, requestIdBytes(this))
      writeHeaders(this.res, headers)
      this.writeLateHeaders()
      this.res.end(body, isDraining())
    })
  }

  /** A reply without a body (204, HEAD, redirects). */
  empty(status: number, headers?: ResponseHeaders): void {
    if (!this.open) return
    this.status = status
    this.finished = true
    this.writeEmpty(status, headers)
  }

  protected writeEmpty(status: number, headers: ResponseHeaders | undefined): void {
    this.res.cork(() => {
      this.res.writeStatus(statusLine(status)).writeHeader(REQUEST_ID_HEADER, requestIdBytes(this))
      writeHeaders(this.res, headers)
      this.writeLateHeaders()
      // RFC 9110: no Content-Length on a 204, so its close is said in a header (endWithoutBody's flag would add a length).
      if (status === 204) {
        if (isDraining()) this.res.writeHeader(CONNECTION, CLOSE)
        this.res.endWithoutBody()
      } else if (this.method === 'HEAD') this.res.endWithoutBody(0, isDraining())
      else this.res.end('', isDraining())
    })
  }

  error(err: unknown, options: { closeConnection?: boolean } = {}): void {
    if (isCommitFailure(err)) {
      // An auth-store commit failed: its cause decides between 507 and 500.
      void causeOf(err).then((cause) => this.error(isDiskFull(cause) ? new ApiError('insufficient_storage', DISK_FULL_MESSAGE) : cause, options))
      return
    }
    if (isDiskFull(err)) err = new ApiError('insufficient_storage', DISK_FULL_MESSAGE)
    const apiError = err instanceof ApiError ? err : internalError(err, this.requestId)
    if (!this.open) return
    if (apiError.oauth !== undefined) oauthErrorAnswered(apiError.oauth.error)
    this.status = apiError.status
    this.finished = true
    this.writeError(apiError, options.closeConnection === true)
  }

  protected writeError(apiError: ApiError, closeConnection: boolean): void {
    const body = JSON.stringify(errorBody(apiError, this.publicUrl))
    const headers: Record<string, string> = { ...apiError.headers }
    if (apiError.status === 503 && headers['retry-after'] === undefined) headers['retry-after'] = '1'
    if (apiError.status === 507 && headers['retry-after'] === undefined) headers['retry-after'] = String(DISK_FULL_RETRY_AFTER_SECONDS)
    this.res.cork(() => {
      this.res.writeStatus(statusLine(apiError.status)).writeHeader(CONTENT_TYPE, JSON_TYPE).writeHeader(REQUEST_ID_HEADER, requestIdBytes(this))
      for (const k in headers) this.res.writeHeader(k, headers[k]!)
      this.writeLateHeaders()
      const close = closeConnection || isDraining()
      if (this.method === 'HEAD') this.res.endWithoutBody(body.length, close)
      else this.res.end(body, close)
    })
  }
}

function internalError(err: unknown, requestId: string): ApiError {
  log.error({ requestId, err }, `internal error (trace ${requestId})`)
  return new ApiError('internal_error', `internal error, trace id ${requestId}`)
}
