// Applies a batch's recorded effects (recorder.ts) to a shard's LMDB, with
// the stream sequence it was appended at, in the one transaction that
// commits both: the owner after its append, a standby as it tails the
// stream. What a host has applied is therefore always a prefix of the stream.
import type { Database, RootDatabase } from 'lmdb'
import { DB_OPTIONS, type ShardStore } from '../../store/shard-store'
import type { Effect } from '../../../src/replication/effects'
import type { Key } from '../../store/keys'
import type { Recorder } from './recorder'

const APPLIED_KEY = 'applied'
const dbs = new WeakMap<RootDatabase, Database<number, string>>()

function replicationDb(store: ShardStore): Database<number, string> {
  let db = dbs.get(store.env)
  if (db === undefined) {
    db = store.env.openDB<number, string>('replication', DB_OPTIONS as never)
    dbs.set(store.env, db)
  }
  return db
}

/** The last stream sequence this shard's LMDB holds (0: none). */
export function appliedSequence(store: ShardStore): number {
  return replicationDb(store).get(APPLIED_KEY) ?? 0
}

/**
 * Inside a write transaction: the effects, then the sequence. Returns the key
 * slots of consents the batch revoked whose keys this host still holds (the
 * caller destroys them once the transaction is durable, as the owner does).
 */
export function applyEffects(recorder: Recorder, effects: readonly Effect[], sequence: number): number[] {
  const revoked: number[] = []
  for (const e of effects) {
    if ('slot' in e) {
      recorder.rawSlotWrite(e.slot, Buffer.from(e.wrapped))
      continue
    }
    // Only the auth store's first entry clears (a snapshot); a shard's stream never carries one.
    if ('cleared' in e) throw new Error(`a shard's stream entry clears the database "${e.cleared}"`)
    const db = recorder.raw.get(e.db)
    if (db === undefined) throw new Error(`a replicated effect names an unknown database "${e.db}"`)
    if (e.removed === true) db.remove(e.key as Key)
    else {
      db.put(e.key as Key, e.value)
      if (e.db === 'consents' && isRevoked(e.value) && recorder.store.keyFile.read(e.value.slot) !== undefined) revoked.push(e.value.slot)
    }
  }
  replicationDb(recorder.store).putSync(APPLIED_KEY, sequence)
  return revoked
}

function isRevoked(value: unknown): value is { status: 'revoked'; slot: number } {
  const v = value as { status?: unknown; slot?: unknown } | null
  return v !== null && typeof v === 'object' && v.status === 'revoked' && typeof v.slot === 'number'
}
