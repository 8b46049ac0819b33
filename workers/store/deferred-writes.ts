// Writes that the writes of one group commit repeat: a tenant's event-log
// head (every appended event) and a type's node count (every created or
// deleted node). Inside withDeferredWrites they are kept here and written
// once per key when the batch ends, inside its transaction, instead of once
// per write: fewer LMDB puts per durable write, same committed state.
import { eventHeadKey, type Key } from './keys'
import type { EventHead } from './schema'
import type { DeferredWrites, ShardStore } from './shard-store'


/**
 * Runs `fn` inside the current write transaction with head and count writes
 * deferred to its end. If `fn` throws, nothing deferred is written (the
 * caller aborts the transaction and forgets its caches, as for any failure).
 */
export function withDeferredWrites<T>(store: ShardStore, fn: () => T): T {
  const deferred: DeferredWrites = { heads: new Map(), counts: new Map() }
  store.deferred = deferred
  try {
    const result = fn()
    for (const [tenant, h] of deferred.heads) store.eventHeads.putSync(eventHeadKey(tenant), h)
    for (const { key, value } of deferred.counts.values()) {
      if (value === 0) store.counts.removeSync(key)
      else store.counts.putSync(key, value)
    }
    return result
  } finally {
    store.deferred = undefined
  }
}

/** The head written so far in this batch, if any. */
export function deferredHead(store: ShardStore, tenant: string): EventHead | undefined {
  return store.deferred?.heads.get(tenant)
}

export function writeHead(store: ShardStore, tenant: string, h: EventHead): void {
  if (store.deferred !== undefined) store.deferred.heads.set(tenant, h)
  else store.eventHeads.putSync(eventHeadKey(tenant), h)
}

/** Adds `delta` to a count (a count of 0 is no entry). */
export function addToCount(store: ShardStore, key: Key, delta: number): void {
  const deferred = store.deferred
  if (deferred === undefined) {
    const next = (store.counts.get(key) ?? 0) + delta
    if (next === 0) store.counts.removeSync(key)
    else store.counts.putSync(key, next)
    return
  }
  const id = JSON.stringify(key)
  const pending = deferred.counts.get(id)
  if (pending !== undefined) pending.value += delta
  else deferred.counts.set(id, { key, value: (store.counts.get(key) ?? 0) + delta })
}
