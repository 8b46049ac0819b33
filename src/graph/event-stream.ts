// One open event stream (src/graph/ws-stream.ts upgrades and counts them):
// one JSON envelope per message, in sequence order, from after `after` (or,
// without it, from the end of the log at connection time).
//
// Back-pressure: a stream holds at most one page of events (PAGE_SIZE) and
// sends from it only while uWebSockets.js buffers less than HIGH_WATER_BYTES
// for the socket; the next page is read from the shard only once the page is
// sent and the buffer is below the mark again, and `drain` resumes it. A
// consumer that does not read therefore costs the server one page and one
// high-water mark of memory, never the backlog.
import type { WebSocket } from 'uWebSockets.js'
import type { GraphServices } from './services'
import { readHead, readPage, type LoggedEvent, type TenantWakeups } from '../events/event-page'
import { log } from '../telemetry/log'

export const PAGE_SIZE = 100
/** Sending pauses while uWebSockets.js buffers this much for the socket. */
export const HIGH_WATER_BYTES = 64 * 1024
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

export interface StreamData {
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

export class EventStream {
  private cursor = 0
  private page: LoggedEvent[] = []
  private sent = 0
  private reading = false
  /** events may exist after the cursor (set by a full page or an append) */
  private more = true
  private closed = false
  private retry: NodeJS.Timeout | undefined
  private readonly unsubscribe: () => void

  constructor(private readonly ws: WebSocket<StreamData>, private readonly s: GraphServices, wakeups: TenantWakeups, private readonly data: StreamData) {
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
          log.error(`event stream of tenant ${this.data.tenant}: ${r.message}`)
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
