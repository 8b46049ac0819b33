// What a group commit's batch changes, recorded as it runs (docs/design/replication.md,
// "Replication"): every LMDB put and remove, by database, and every key-file
// slot written, as the values they store (sealed values, absolute counts,
// events with their sequences, schedules). Standbys apply the list verbatim
// (apply.ts), so "apply" is generic and never re-runs an operation.
//
// Installed only in cluster mode: it wraps the store's write calls once, and
// records only between start() and take(). A child transaction that is rolled
// back drops what it recorded.
import type { Database } from 'lmdb'
import { EffectRecording } from '../../../src/replication/effects'
import type { Key } from '../../store/keys'
import type { ShardStore } from '../../store/shard-store'
import { webhookDb } from '../../store/webhooks'

/** The databases of a shard by the name they were opened under. */
export function shardDatabases(store: ShardStore): Map<string, Database<unknown, Key>> {
  const dbs = new Map<string, Database<unknown, Key>>()
  for (const name of ['nodes', 'relations', 'adjacency', 'counts', 'index', 'owned', 'consents', 'subjects', 'ownedRelations', 'keySlots', 'events', 'eventHeads', 'schedules', 'scheduleIds'] as const) {
    dbs.set(name, store[name] as unknown as Database<unknown, Key>)
  }
  dbs.set('webhooks', webhookDb(store) as unknown as Database<unknown, Key>)
  // A database added to ShardStore and not listed here would not be replicated: refuse to start instead.
  for (const [name, value] of Object.entries(store)) {
    if (name !== 'env' && typeof (value as { putSync?: unknown } | null)?.putSync === 'function' && !dbs.has(name)) {
      throw new Error(`the shard database "${name}" is not replicated (workers/actor/replication/recorder.ts)`)
    }
  }
  return dbs
}

/** LMDB's sentinel a transaction callback returns to roll back (lmdb-js exports it as ABORT). */
type ChildTransaction = (fn: () => unknown) => unknown

export class Recorder extends EffectRecording {
  /** The original write calls, for apply.ts (a standby's writes are not recorded). */
  readonly raw = new Map<string, { put: (key: Key, value: unknown) => boolean; remove: (key: Key) => boolean }>()
  readonly rawSlotWrite: (slot: number, wrapped: Buffer) => void

  /** `abortSentinel`: what a transaction callback returns to roll back (the replica's write path runs batches that way). */
  constructor(readonly store: ShardStore, readonly abortSentinel: unknown) {
    super()
    for (const [name, db] of shardDatabases(store)) {
      const put = db.putSync.bind(db) as (key: Key, value: unknown) => boolean
      const remove = db.removeSync.bind(db) as (key: Key) => boolean
      this.raw.set(name, { put, remove })
      db.putSync = ((key: Key, value: unknown, ...rest: unknown[]) => {
        this.effects?.push({ db: name, key, value })
        return (put as (...a: unknown[]) => boolean)(key, value, ...rest)
      }) as typeof db.putSync
      db.removeSync = ((key: Key, ...rest: unknown[]) => {
        this.effects?.push({ db: name, key, removed: true })
        return (remove as (...a: unknown[]) => boolean)(key, ...rest)
      }) as typeof db.removeSync
    }
    const file = store.keyFile
    const write = file.write.bind(file)
    this.rawSlotWrite = write
    file.write = (slot: number, wrapped: Buffer) => {
      this.effects?.push({ slot, wrapped: Uint8Array.from(wrapped) })
      write(slot, wrapped)
    }
    // A rolled-back child transaction (a failing write of the batch) takes its records with it.
    const env = store.env as unknown as { childTransaction: ChildTransaction }
    const child = env.childTransaction.bind(store.env)
    env.childTransaction = (fn) => {
      const mark = this.mark()
      try {
        const result = child(fn)
        if (result === abortSentinel) this.dropAfter(mark)
        return result
      } catch (err) {
        this.dropAfter(mark)
        throw err
      }
    }
  }
}
