// The event stream (GET events/stream, a WebSocket) as an async iterator
// that resumes: after a disconnect it reconnects with `after` = the last
// sequence it yielded (no gap, no duplicate), with a new token when the old
// one expired (close 4401). A cursor older than retention (4410) and a
// refused upgrade are thrown as the service's error: the upgrade's status is
// not visible to a WebSocket, so the same cursor read over HTTP names it.
import { ProfileGraphError } from './errors.js'
import { sleep, type Transport } from './transport.js'
import type { EventPage, GraphEvent } from './types.js'

/** What the stream uses of a standard WebSocket (the browser's, Node 22's, or undici's in Node 20). */
export interface WebSocketLike {
  readonly readyState: number
  addEventListener(type: 'open', listener: () => void): void
  addEventListener(type: 'message', listener: (message: { data: unknown }) => void): void
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void
  close(code?: number): void
}

/** The standard WebSocket constructor. */
export type WebSocketConstructor = new (url: string) => WebSocketLike

export interface EventStreamOptions {
  /** Start after this sequence (0: everything still kept); without it, only events from now on. */
  after?: number
  /** Reconnect after a disconnect (default true); false: the loop ends when the connection does. */
  reconnect?: boolean
  /** The longest wait between reconnections (default 30 s); the first is 250 ms. */
  maxReconnectDelayMs?: number
  /** Connection attempts in a row that may fail before the error is thrown (default 10). */
  maxFailures?: number
  signal?: AbortSignal
}

/** Close codes after which the stream is resumed (shutdown, internal error, try again later, lost connection). */
const RESUMABLE = new Set([1001, 1006, 1011, 1012, 1013])
const TOKEN_EXPIRED = 4401
const CURSOR_EXPIRED = 4410

type Item = { kind: 'event'; event: GraphEvent } | { kind: 'closed'; code: number; reason: string; opened: boolean }

/** One connection's messages, queued until the loop takes them. */
class Connection {
  private readonly items: Item[] = []
  private wake: (() => void) | undefined
  private opened = false
  readonly socket: WebSocketLike

  constructor(WS: WebSocketConstructor, url: string) {
    this.socket = new WS(url)
    this.socket.addEventListener('open', () => { this.opened = true })
    this.socket.addEventListener('message', (m) => this.push({ kind: 'event', event: JSON.parse(String(m.data)) as GraphEvent }))
    this.socket.addEventListener('close', (c) => this.push({ kind: 'closed', code: c.code, reason: c.reason, opened: this.opened }))
  }

  private push(item: Item): void {
    this.items.push(item)
    this.wake?.()
  }

  async next(): Promise<Item> {
    while (this.items.length === 0) await new Promise<void>((resolve) => { this.wake = resolve })
    return this.items.shift()!
  }

  close(): void {
    if (this.socket.readyState <= 1) this.socket.close(1000)
  }
}

export async function* eventStream(
  transport: Transport, WS: WebSocketConstructor, tenantPath: string, readPage: (after: number) => Promise<EventPage>, options: EventStreamOptions,
): AsyncGenerator<GraphEvent, void, undefined> {
  let after = options.after
  let failures = 0
  const maxDelay = options.maxReconnectDelayMs ?? 30_000
  const base = transport.baseUrl.replace(/^http/, 'ws')
  for (;;) {
    const token = await transport.token()
    const query = new URLSearchParams({ access_token: token })
    if (after !== undefined) query.set('after', String(after))
    const connection = new Connection(WS, `${base}${tenantPath}/events/stream?${query}`)
    const onAbort = (): void => connection.close()
    options.signal?.addEventListener('abort', onAbort, { once: true })
    let closed: Extract<Item, { kind: 'closed' }> | undefined
    try {
      while (closed === undefined) {
        const item = await connection.next()
        if (item.kind === 'closed') closed = item
        else {
          failures = 0
          after = item.event.sequence
          yield item.event
        }
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort)
      connection.close()
    }
    if (options.signal?.aborted) return
    if (closed.code === CURSOR_EXPIRED) throw new ProfileGraphError({ status: 410, type: 'cursor_expired', message: closed.reason })
    if (closed.code === TOKEN_EXPIRED) {
      transport.invalidate(token)
      continue
    }
    if (!closed.opened) {
      // the upgrade was refused or never reached the service: the cursor read over HTTP has the same checks and
      // throws why (without a cursor, from past the end: nothing there can have expired)
      await readPage(after ?? Number.MAX_SAFE_INTEGER)
    } else if (!RESUMABLE.has(closed.code)) return
    if (options.reconnect === false) return
    failures++
    if (failures > (options.maxFailures ?? 10)) {
      throw new ProfileGraphError({ status: 0, type: 'network_error', message: `the event stream closed ${failures} times in a row (last: ${closed.code} ${closed.reason})` })
    }
    await sleep(Math.min(maxDelay, 250 * 2 ** (failures - 1)), options.signal).catch(() => undefined)
    if (options.signal?.aborted) return
  }
}
