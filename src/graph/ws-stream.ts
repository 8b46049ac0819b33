// WebSocket /graph/v1/{tenant}/events/stream?after=<sequence> (docs/design/contracts.md,
// Events): the upgrade, with the checks of an HTTP route, and the open
// streams of one server; each stream is an EventStream (src/graph/event-stream.ts).
import type { HttpRequest, HttpResponse, us_socket_context_t, WebSocket, WebSocketBehavior } from 'uWebSockets.js'
import { authorize, bearerToken, VIEW_SCOPE } from '../auth/helpers/bearer'
import type { GraphServices } from './services'
import { ApiError } from '../core/errors'
import { TenantWakeups } from '../events/event-page'
import { Exchange } from '../http/exchange'
import { isDraining } from '../http/in-flight'
import { originOf } from '../net/origin'
import type { ActorPool } from '../shards/actor-pool'
import { CLOSE, EventStream, type StreamData } from './event-stream'
import { tenantSegment } from './validate'
import { eventStreamsOpen } from '../telemetry/metrics'

/** Registered before the catch-all route; uWebSockets.js hands requests without an upgrade on to it. */
export const STREAM_PATTERN = '/graph/v1/:tenant/events/stream'
/** uWebSockets.js drops messages past this; a stream never gets near it (high-water mark plus one envelope). */
const MAX_BACKPRESSURE_BYTES = 1024 * 1024

function tooManyStreams(tenant: string, max: number): ApiError {
  return new ApiError('service_unavailable', `tenant "${tenant}" has ${max} open event streams, the most allowed; close one or retry later`, {
    headers: { 'retry-after': '5' },
  })
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
 * The open event streams of one server (src/app/server.ts owns it): every socket,
 * so that a shutdown can say goodbye (1001) rather than drop the connections,
 * and the count per tenant, so that one tenant's clients cannot hold every
 * socket and its memory.
 */
export class EventStreams {
  private readonly sockets = new Set<WebSocket<StreamData>>()
  private readonly perTenant = new Map<string, number>()
  private readonly wakeupsOfPool = new WeakMap<ActorPool, TenantWakeups>()

  /** Open streams of `tenant`. */
  count(tenant: string): number {
    return this.perTenant.get(tenant) ?? 0
  }

  /** Closes every stream with 1001 "going away" (the server is shutting down). */
  endAll(): void {
    for (const ws of [...this.sockets]) ws.end(CLOSE.goingAway, 'the server is shutting down; reconnect from the last sequence received')
  }

  behavior(services: () => GraphServices | undefined): WebSocketBehavior<StreamData> {
    return {
      maxPayloadLength: 4096,
      maxBackpressure: MAX_BACKPRESSURE_BYTES,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => this.upgrade(services(), res, req, context),
      open: (ws) => this.opened(ws, services()),
      // Messages from the client are not part of the protocol; they are ignored.
      message: () => undefined,
      drain: (ws) => ws.getUserData().stream?.pump(),
      close: (ws) => this.closed(ws),
    }
  }

  /**
   * The upgrade: the same checks as an HTTP route (path decoding, token, scope
   * platform.profile_graph_view, token tenant = path tenant), answered with the
   * normal JSON error and status when they fail. Browsers, which cannot set
   * headers on a WebSocket, may put the token in `access_token`.
   */
  private upgrade(s: GraphServices | undefined, res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const key = req.getHeader('sec-websocket-key')
    const protocols = req.getHeader('sec-websocket-protocol')
    const extensions = req.getHeader('sec-websocket-extensions')
    const ex = new Exchange(res, req, s?.publicUrl ?? '')
    ex.route = STREAM_PATTERN
    try {
      if (s === undefined) throw new ApiError('service_unavailable', 'the server is starting')
      if (isDraining()) throw new ApiError('service_unavailable', 'the server is shutting down')
      // A browser page says where it comes from: only this server's origin and --cors-origins may open a stream.
      const origin = ex.headers.origin
      if (origin !== '' && !s.corsOrigins.has(origin) && origin !== originOf(s.publicUrl)) {
        throw new ApiError('forbidden', `a page of origin ${origin} may not open the event stream: the origin is not in --cors-origins`)
      }
      const tenant = tenantSegment(ex.segments[2] ?? '')
      const query = ex.query
      const queryToken = query.get('access_token')
      const authorization = ex.headers.authorization !== '' || queryToken === null ? ex.headers.authorization : `Bearer ${queryToken}`
      authorize(s.tokens, authorization, VIEW_SCOPE, tenant)
      if (this.count(tenant) >= s.maxStreamsPerTenant) throw tooManyStreams(tenant, s.maxStreamsPerTenant)
      const data: StreamData = { tenant, after: afterParam(query.get('after')), token: bearerToken(authorization)!, stream: undefined }
      ex.status = 101
      ex.finished = true
      res.cork(() => res.upgrade(data, key, firstProtocol(protocols), extensions, context))
    } catch (err) {
      ex.error(err)
    }
  }

  private opened(ws: WebSocket<StreamData>, s: GraphServices | undefined): void {
    this.sockets.add(ws)
    eventStreamsOpen.set(this.sockets.size)
    const data = ws.getUserData()
    const open = this.count(data.tenant)
    this.perTenant.set(data.tenant, open + 1)
    if (s === undefined) ws.end(CLOSE.tryAgainLater, 'the server is starting')
    // Upgrades racing past the check at the upgrade are closed here.
    else if (open >= s.maxStreamsPerTenant) ws.end(CLOSE.tryAgainLater, 'too many open event streams for this tenant; retry later')
    else {
      data.stream = new EventStream(ws, s, this.wakeups(s.pool), data)
      data.stream.start()
    }
  }

  private closed(ws: WebSocket<StreamData>): void {
    this.sockets.delete(ws)
    eventStreamsOpen.set(this.sockets.size)
    const data = ws.getUserData()
    const left = this.count(data.tenant) - 1
    if (left > 0) this.perTenant.set(data.tenant, left)
    else this.perTenant.delete(data.tenant)
    data.stream?.closedBySocket()
  }

  private wakeups(pool: ActorPool): TenantWakeups {
    let w = this.wakeupsOfPool.get(pool)
    if (w === undefined) {
      w = new TenantWakeups(pool)
      this.wakeupsOfPool.set(pool, w)
    }
    return w
  }
}
