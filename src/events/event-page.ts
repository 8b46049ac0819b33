// Reads the event log a page at a time for the push deliveries (WebSocket
// stream, webhooks): the actor's `readEvents` answer split into one JSON
// envelope per event, each with its sequence, and its failures sorted into
// the three a consumer handles differently.
import type { ActorPool } from '../shards/actor-pool'
import type { ActorReply } from '../contract/messages'

export interface LoggedEvent {
  sequence: number
  /** the envelope as JSON text: one WebSocket message, one webhook body */
  json: string
}

export type PageResult =
  | { kind: 'page'; events: LoggedEvent[]; next: number }
  /** the cursor is older than what is kept (410 cursor_expired) */
  | { kind: 'expired'; message: string }
  /** a shard actor restarted or is overloaded: try again shortly */
  | { kind: 'unavailable'; message: string }
  | { kind: 'failed'; message: string }

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** The body `{"events":[...],"next":N}` as separate envelopes. */
export function splitPage(body: string): { events: LoggedEvent[]; next: number } {
  const doc: unknown = JSON.parse(body)
  if (!isRecord(doc) || !Array.isArray(doc.events) || typeof doc.next !== 'number') throw new Error('malformed event page')
  const events = doc.events.map((e: unknown): LoggedEvent => {
    if (!isRecord(e) || typeof e.sequence !== 'number') throw new Error('malformed event in page')
    return { sequence: e.sequence, json: JSON.stringify(e) }
  })
  return { events, next: doc.next }
}

function failure(reply: ActorReply): PageResult {
  if (reply.kind !== 'error') return { kind: 'failed', message: `unexpected actor reply ${reply.kind}` }
  if (reply.type === 'cursor_expired') return { kind: 'expired', message: reply.message }
  if (reply.type === 'service_unavailable') return { kind: 'unavailable', message: reply.message }
  return { kind: 'failed', message: reply.message }
}

/** Events of `tenant` with sequence > after, at most `limit`. */
export function readPage(pool: ActorPool, tenant: string, after: number, limit: number, done: (r: PageResult) => void): void {
  pool.call(tenant, { op: 'readEvents', tenant, after, limit }, (reply) => {
    if (reply.kind !== 'ok' || reply.body === undefined) {
      done(failure(reply))
      return
    }
    try {
      done({ kind: 'page', ...splitPage(reply.body) })
    } catch (err) {
      done({ kind: 'failed', message: String(err) })
    }
  })
}

/** The sequence range of the tenant's log still kept; `undefined` when the shard did not answer. */
export function readHead(pool: ActorPool, tenant: string, done: (head: { first: number; last: number } | undefined) => void): void {
  pool.call(tenant, { op: 'eventHead', tenant }, (reply) => {
    if (reply.kind !== 'ok' || reply.body === undefined) {
      done(undefined)
      return
    }
    const h: unknown = JSON.parse(reply.body)
    done(isRecord(h) && typeof h.first === 'number' && typeof h.last === 'number' ? { first: h.first, last: h.last } : undefined)
  })
}

/**
 * Wakes consumers of a tenant's log: one listener on the pool, a set of
 * waiters per tenant, so an append costs one map lookup however many
 * streams and webhooks there are.
 */
export class TenantWakeups {
  private readonly waiters = new Map<string, Set<() => void>>()
  private readonly stop: () => void

  constructor(pool: ActorPool) {
    this.stop = pool.onEvents((tenant) => {
      const set = this.waiters.get(tenant)
      if (set !== undefined) for (const wake of [...set]) wake()
    })
  }

  /** Calls `wake` after every append to `tenant`'s log until the returned function is called. */
  add(tenant: string, wake: () => void): () => void {
    let set = this.waiters.get(tenant)
    if (set === undefined) {
      set = new Set()
      this.waiters.set(tenant, set)
    }
    set.add(wake)
    return () => {
      const s = this.waiters.get(tenant)
      if (s === undefined) return
      s.delete(wake)
      if (s.size === 0) this.waiters.delete(tenant)
    }
  }

  close(): void {
    this.stop()
    this.waiters.clear()
  }
}
