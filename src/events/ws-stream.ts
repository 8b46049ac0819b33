// WebSocket /graph/v1/{tenant}/events/stream?after=<sequence> (docs/contracts.md,
// Events): one JSON envelope per message, in sequence order, from after
// `after` (or, without it, from the end of the log at connection time).
//
// Back-pressure: a stream holds at most one page of events (PAGE_SIZE) and
// sends from it only while uWebSockets.js buffers less than HIGH_WATER_BYTES
// for the socket; the next page is read from the shard only once the page is
// sent and the buffer is below the mark again, and `drain` resumes it. A
// consumer that does not read therefore costs the server one page and one
// high-water mark of memory, never the backlog.
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import { authorize, bearerToken, VIEW_SCOPE } from '../auth/helpers/bearer'
import { ApiError } from '../errors'
import { Exchange } from '../front/exchange'
import { isDraining } from '../front/in-flight'
import type { Services } from '../front/services'
import { tenantSegment } from '../graph/validate'
import type { ActorPool } from '../shard/actor-pool'
import { readHead, readPage, TenantWakeups, type LoggedEvent } from './event-page'

/** Registered before the catch-all route; uWebSockets.js hands requests without an upgrade on to it. */
export const STREAM_PATTERN = '/graph/v1/:tenant/events/stream'
export const PAGE_SIZE = 100
/** Sending pauses while uWebSockets.js buffers this much for the socket. */
export const HIGH_WATER_BYTES = 64 * 1024
/** uWebSockets.js drops messages past this; a stream never gets near it (high-water mark plus one envelope). */
const MAX_BACKPRESSURE_BYTES = 1024 * 1024
/** A read the shard could not serve (actor restart, full queue) is retried after this. */
const RETRY_MS = 250

/** Close codes (4000-4999 are the application's). */
export const CLOSE = {
  /** `after` is older than what is kept: reconnect with a newer cursor, e.g. the `first - 1` named in the reason. */
  cursorExpired: 4410,
  /** the access token expired or was revoked while the stream was open */
  tokenInvalid: 4401,
  /** RFC 6455: the server could not go on; reconnect from the last sequence received */
  internalError: 1011,
  /** RFC 6455 (IANA): try again later */
  tryAgainLater: 1013,
  /** RFC 6455: the server is shutting down */
  goingAway: 1001,
} as const

interface StreamData {
  tenant: string
  /** undefined: from the end of the log at connection time */
  after: number | undefined
  token: string
  stream: EventStream | undefined
}

/** A close reason fits a control frame: at most 123 bytes. */
function reason(text: string): string {
  let r = text
  while (Buffer.byteLength(r) > 123) r = r.slice(0, -1)
  return r
}

class EventStream {
  private cursor = 0
  private page: LoggedEvent[] = []
  private sent = 0
  private reading = false
  /** events may exist after the cursor (set by a full page or an append) */
  private more = true
  private closed = false
  private retry: NodeJS.Timeout | undefined
  private readonly unsubscribe: () => void

  constructor(private readonly ws: WebSocket<StreamData>, private readonly s: Services, wakeups: TenantWakeups, private readonly data: StreamData) {
    // Subscribed before the first read, so no append can slip between them.
    this.unsubscribe = wakeups.add(data.tenant, () => this.wake())
  }

  start(): void {
    if (this.data.after !== undefined) {
      this.cursor = this.data.after
      this.pump()
      return
    }
    this.reading = true
    readHead(this.s.pool, this.data.tenant, (head) => {
      this.reading = false
      if (this.closed) return
      if (head === undefined) this.end(CLOSE.tryAgainLater, 'the event log is unavailable; reconnect')
      else {
        this.cursor = head.last
        this.pump()
      }
    })
  }

  private wake(): void {
    this.more = true
    if (!this.reading) this.pump()
  }

  /** Sends what the page holds while the socket takes it, then reads the next page. Also the `drain` handler. */
  pump(): void {
    if (this.closed) return
    if (this.sent < this.page.length) {
      let dropped = false
      this.ws.cork(() => {
        while (!this.closed && this.sent < this.page.length && this.ws.getBufferedAmount() < HIGH_WATER_BYTES) {
          // 2: dropped past maxBackpressure, which would leave a gap.
          if (this.ws.send(this.page[this.sent++]!.json, false) === 2) {
            dropped = true
            break
          }
        }
      })
      if (dropped) {
        this.end(CLOSE.internalError, 'the server could not buffer the stream; reconnect from the last sequence received')
        return
      }
      if (this.closed || this.sent < this.page.length) return
      this.page = []
      this.sent = 0
    }
    if (this.reading || !this.more || this.retry !== undefined) return
    if (this.ws.getBufferedAmount() >= HIGH_WATER_BYTES) return
    // The token was checked at the upgrade; a long-lived stream stops reading once it expires or is revoked.
    if (this.s.tokens.verify(this.data.token) === undefined) {
      this.end(CLOSE.tokenInvalid, 'the access token expired or was revoked; reconnect with a new one')
      return
    }
    this.read()
  }

  private read(): void {
    this.reading = true
    this.more = false
    readPage(this.s.pool, this.data.tenant, this.cursor, PAGE_SIZE, (r) => {
      this.reading = false
      if (this.closed) return
      switch (r.kind) {
        case 'page':
          if (r.events.length === PAGE_SIZE) this.more = true
          this.cursor = r.next
          this.page = r.events
          this.sent = 0
          this.pump()
          return
        case 'expired':
          this.end(CLOSE.cursorExpired, `cursor expired: ${r.message}`)
          return
        case 'unavailable':
          this.more = true
          this.retry = setTimeout(() => {
            this.retry = undefined
            this.pump()
          }, RETRY_MS)
          return
        case 'failed':
          console.error(`event stream of tenant ${this.data.tenant}: ${r.message}`)
          this.end(CLOSE.internalError, 'internal error reading the event log; reconnect from the last sequence received')
      }
    })
  }

  private end(code: number, text: string): void {
    if (this.closed) return
    this.closedBySocket()
    this.ws.end(code, reason(text))
  }

  /** The socket is gone (the close handler, or end()): stop reading and let go of the page. */
  closedBySocket(): void {
    if (this.closed) return
    this.closed = true
    this.unsubscribe()
    if (this.retry !== undefined) clearTimeout(this.retry)
    this.page = []
  }
}

/** Every open stream, so that a shutdown can say goodbye (1001) rather than drop the connections. */
const openSockets = new Set<WebSocket<StreamData>>()

/** Open streams per tenant: one tenant's clients cannot hold every socket and its memory. */
const openPerTenant = new Map<string, number>()
const openStreams = (tenant: string): number => openPerTenant.get(tenant) ?? 0

function tooManyStreams(tenant: string, max: number): ApiError {
  return new ApiError('service_unavailable', `tenant "${tenant}" has ${max} open event streams, the most allowed; close one or retry later`, {
    headers: { 'retry-after': '5' },
  })
}

/** Closes every stream with 1001 "going away" (the server is shutting down). */
export function endEventStreams(): void {
  for (const ws of [...openSockets]) ws.end(CLOSE.goingAway, 'the server is shutting down; reconnect from the last sequence received')
}

const wakeupsOfPool = new WeakMap<ActorPool, TenantWakeups>()
function wakeups(pool: ActorPool): TenantWakeups {
  let w = wakeupsOfPool.get(pool)
  if (w === undefined) {
    w = new TenantWakeups(pool)
    wakeupsOfPool.set(pool, w)
  }
  return w
}

/** `after`: absent (from now on) or a sequence. */
function afterParam(raw: string | null): number | undefined {
  if (raw === null) return undefined
  if (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new ApiError('bad_request', `after must be an event sequence (a whole number ≥ 0), got "${raw}"`)
  }
  return Number(raw)
}

/** A server picks one of the offered subprotocols (RFC 6455 4.2.2); we have none of our own, so the first. */
function firstProtocol(offered: string): string {
  return offered.split(',')[0]!.trim()
}

/**
 * The upgrade: the same checks as an HTTP route (path decoding, token, scope
 * platform.profile_graph_view, token tenant = path tenant), answered with the
 * normal JSON error and status when they fail. Browsers, which cannot set
 * headers on a WebSocket, may put the token in `access_token`.
 */
function upgrade(s: Services | undefined, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
  const key = req.getHeader('sec-websocket-key')
  const protocols = req.getHeader('sec-websocket-protocol')
  const extensions = req.getHeader('sec-websocket-extensions')
  const ex = new Exchange(res, req, s?.publicUrl ?? '')
  try {
    if (s === undefined) throw new ApiError('service_unavailable', 'the server is starting')
    if (isDraining()) throw new ApiError('service_unavailable', 'the server is shutting down')
    const tenant = tenantSegment(ex.segments[2] ?? '')
    const query = ex.query
    const queryToken = query.get('access_token')
    const authorization = ex.headers.authorization !== '' || queryToken === null ? ex.headers.authorization : `Bearer ${queryToken}`
    authorize(s.tokens, authorization, VIEW_SCOPE, tenant)
    if (openStreams(tenant) >= s.maxStreamsPerTenant) throw tooManyStreams(tenant, s.maxStreamsPerTenant)
    const data: StreamData = { tenant, after: afterParam(query.get('after')), token: bearerToken(authorization)!, stream: undefined }
    ex.finished = true
    res.cork(() => res.upgrade(data, key, firstProtocol(protocols), extensions, context))
  } catch (err) {
    ex.error(err)
  }
}

export function eventStreamBehavior(services: () => Services | undefined): WebSocketBehavior<StreamData> {
  return {
    maxPayloadLength: 4096,
    maxBackpressure: MAX_BACKPRESSURE_BYTES,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    upgrade: (res, req, context) => upgrade(services(), res, req, context),
    open: (ws) => {
      openSockets.add(ws)
      const s = services()
      const data = ws.getUserData()
      const open = openStreams(data.tenant)
      openPerTenant.set(data.tenant, open + 1)
      if (s === undefined) ws.end(CLOSE.tryAgainLater, 'the server is starting')
      // Upgrades racing past the check at the upgrade are closed here.
      else if (open >= s.maxStreamsPerTenant) ws.end(CLOSE.tryAgainLater, 'too many open event streams for this tenant; retry later')
      else {
        data.stream = new EventStream(ws, s, wakeups(s.pool), data)
        data.stream.start()
      }
    },
    // Messages from the client are not part of the protocol; they are ignored.
    message: () => undefined,
    drain: (ws) => ws.getUserData().stream?.pump(),
    close: (ws) => {
      openSockets.delete(ws)
      const data = ws.getUserData()
      const left = openStreams(data.tenant) - 1
      if (left > 0) openPerTenant.set(data.tenant, left)
      else openPerTenant.delete(data.tenant)
      data.stream?.closedBySocket()
    },
  }
}
