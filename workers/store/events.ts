// The event log of a shard (spec section 6, docs/design/contracts.md Events): per tenant, a
// sequence that only grows, each event written in the same LMDB transaction
// as the change it describes, so there is no change without its event and no
// event without its change. Old events are pruned by age and count.
import { randomUUID } from 'node:crypto'
import { deferredHead, writeHead } from './deferred-writes'
import { eventHeadKey, eventHeadTenantOf, eventKey, eventSequenceOf, prefixRange, tenantPrefix, type Key } from './keys'
import type { EventHead, Operation } from './schema'
import type { ShardStore } from './shard-store'

/** Events appended per shard since the actor's last stats report (workers/actor/stats.ts); a batch run again after a failed write counts twice. */
export const appendedSinceReport = new Map<number, number>()

export function head(store: ShardStore, tenant: string): EventHead {
  // Another thread appends to a shard read here: its head is not ours to cache.
  if (store.reader) return store.eventHeads.get(eventHeadKey(tenant)) ?? { first: 1, last: 0 }
  let h = deferredHead(store, tenant) ?? store.cache.eventHeads.get(tenant)
  if (h === undefined) {
    h = store.eventHeads.get(eventHeadKey(tenant)) ?? { first: 1, last: 0 }
    store.cache.eventHeads.set(tenant, h)
  }
  return h
}

function setHead(store: ShardStore, tenant: string, h: EventHead): void {
  writeHead(store, tenant, h)
  store.cache.eventHeads.set(tenant, h)
}

/** Appends one event inside the current write transaction; returns its sequence. */
export function appendEvent(
  store: ShardStore, tenant: string, operation: Operation, schema: string, payload: Record<string, unknown>,
  traceId: string | undefined, time: number,
): number {
  const h = head(store, tenant)
  const sequence = h.last + 1
  const envelope = { id: traceId ?? randomUUID(), sequence, tenant, operation, schema, payload, time }
  store.events.putSync(eventKey(tenant, sequence), { t: time, j: JSON.stringify(envelope) })
  let first = h.first
  // Count retention is kept exactly, one event out per event in, so it costs O(1).
  while (sequence - first + 1 > store.maxEventsPerTenant) store.events.removeSync(eventKey(tenant, first++))
  setHead(store, tenant, { first, last: sequence })
  appendedSinceReport.set(store.shard, (appendedSinceReport.get(store.shard) ?? 0) + 1)
  return sequence
}

export type ReadResult = { kind: 'events'; events: string[]; next: number } | { kind: 'expired'; first: number }

/** Events with sequence > after, at most `limit`; `expired` when `after` is older than what is kept. */
export function readEvents(store: ShardStore, tenant: string, after: number, limit: number): ReadResult {
  const h = head(store, tenant)
  if (after < h.first - 1) return { kind: 'expired', first: h.first }
  const events: string[] = []
  let next = after
  for (const { key, value } of store.events.getRange({ start: eventKey(tenant, after), exclusiveStart: true, end: prefixRange(tenantPrefix(tenant)).end, limit })) {
    events.push(value.j)
    next = eventSequenceOf(key)
  }
  return { kind: 'events', events, next }
}

/** An event past the age (written before `cutoff`) or beyond the count (before sequence `byCount`): pruned. */
const isStale = (time: number, sequence: number, cutoff: number, byCount: number): boolean => time < cutoff || sequence < byCount

/**
 * Whether pruneEvents has anything to remove: each tenant's oldest event is
 * past the age or the count. Read outside a transaction, so that a prune
 * with nothing to do commits nothing (a commit drops every neighbourhood
 * the actors keep of the shard: kept-reads.ts).
 */
export function eventsToPrune(store: ShardStore, cutoff: number, maxCount: number): boolean {
  for (const { key, value: h } of store.eventHeads.getRange()) {
    const tenant = eventHeadTenantOf(key)
    for (const { key: k, value } of store.events.getRange({ start: eventKey(tenant, h.first), end: prefixRange(tenantPrefix(tenant)).end, limit: 1 })) {
      if (isStale(value.t, eventSequenceOf(k), cutoff, h.last - maxCount + 1)) return true
    }
  }
  return false
}

/** Drops events older than `cutoff` and beyond `maxCount` per tenant (inside a write transaction). */
export function pruneEvents(store: ShardStore, cutoff: number, maxCount: number): void {
  for (const { key, value: h } of store.eventHeads.getRange()) {
    const tenant = eventHeadTenantOf(key)
    let first = h.first
    const byCount = h.last - maxCount + 1
    const stale: Key[] = []
    for (const { key: k, value } of store.events.getRange({ start: eventKey(tenant, first), end: prefixRange(tenantPrefix(tenant)).end })) {
      const seq = eventSequenceOf(k)
      if (!isStale(value.t, seq, cutoff, byCount)) break
      stale.push(k)
      first = seq + 1
    }
    for (const k of stale) store.events.removeSync(k)
    if (first !== h.first) setHead(store, tenant, { first, last: h.last })
  }
}
