// Applies a shard's stream entries (recorder.ts records a batch's effects;
// src/replication/effects.ts: batches, claims and key grants) to its LMDB, with the
// stream sequence, in the one transaction that commits both: the owner
// after its appends, a standby as it tails the stream. What a host has
// applied is therefore always a prefix of the stream.
//
// Key grants: the slot is written, and its stream sequence recorded
// (`grant:<slot>`). A revocation of the slot's consent, or a later grant of
// the same slot (a KEK rotation's re-wrap, or a grant whose batch never
// reached the stream), moves that sequence to `erase:<sequence>`: the grant
// message to erase from the stream (shard-replica.ts, eraseGrants). Every
// host keeps these records in its own LMDB, so a host that claims the shard
// finishes erasures a former owner did not.
import type { Database, RootDatabase } from 'lmdb'
import { DB_OPTIONS, type ShardStore } from '../../store/shard-store'
import type { Effect, KeyGrant, StreamEntry } from '../../../src/replication/effects'
import type { Key } from '../../store/keys'
import type { Recorder } from './recorder'

/** The database and key holding the applied sequence (a snapshot carries it: snapshot-files.ts). */
export const REPLICATION_DB = 'replication'
export const APPLIED_KEY = 'applied'
const grantKey = (slot: number): string => `grant:${slot}`
const ERASE = 'erase:'
/** ';' sorts right after ':', so this ends the range of `erase:` keys. */
const ERASE_END = 'erase;'
const dbs = new WeakMap<RootDatabase, Database<number, string>>()

function replicationDb(store: ShardStore): Database<number, string> {
  let db = dbs.get(store.env)
  if (db === undefined) {
    db = store.env.openDB<number, string>(REPLICATION_DB, DB_OPTIONS as never)
    dbs.set(store.env, db)
  }
  return db
}

/** The last stream sequence this shard's LMDB holds (0: none). */
export function appliedSequence(store: ShardStore): number {
  return replicationDb(store).get(APPLIED_KEY) ?? 0
}

/** Inside a write transaction: sets the applied sequence alone (a snapshot's restore). */
export function setAppliedSequence(store: ShardStore, sequence: number): void {
  replicationDb(store).putSync(APPLIED_KEY, sequence)
}

/** The stream sequence of the grant message of a slot's live key, if it came as one. */
export function grantSequence(store: ShardStore, slot: number): number | undefined {
  return replicationDb(store).get(grantKey(slot))
}

/** Grant messages to erase from the stream, oldest first. */
export function grantsToErase(store: ShardStore): number[] {
  return [...replicationDb(store).getKeys({ start: ERASE, end: ERASE_END })].map((k) => Number(String(k).slice(ERASE.length))).sort((a, b) => a - b)
}

/** The grant message at `sequence` is gone from the stream (erased, or found absent). */
export function grantErased(store: ShardStore, sequence: number): Promise<boolean> {
  return replicationDb(store).remove(`${ERASE}${sequence}`)
}

/** What applying entries left to do once they are durable. */
export interface Applied {
  /** Key slots of consents they revoked whose keys this host still holds (destroyed after the commit, as the owner does). */
  revoked: number[]
  /** Whether they left grant messages to erase. */
  erasures: boolean
}

/** The key of the last local journal position this shard's LMDB holds (a host without cluster mode: workers/actor/local-journal.ts). */
export const JOURNAL_KEY = 'journal'

/** The last local journal position this shard's LMDB holds (0: none). */
export function journalPosition(store: ShardStore): number {
  return replicationDb(store).get(JOURNAL_KEY) ?? 0
}

/** Inside a write transaction: the local journal position its batch was appended at. */
export function setJournalPosition(store: ShardStore, position: number): void {
  replicationDb(store).putSync(JOURNAL_KEY, position)
}

/** Inside a write transaction: one entry, then its sequence (under `positionKey`: the stream's, or the local journal's). */
export function applyEntry(recorder: Recorder, entry: StreamEntry, sequence: number, into: Applied, positionKey = APPLIED_KEY): void {
  if ('grant' in entry) applyGrant(recorder, entry.grant, sequence, into)
  else {
    for (const e of entry.effects) {
      // A batch appended before grants were messages of their own carries its new keys' slots.
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
        if (e.db === 'consents' && isRevoked(e.value)) {
          if (recorder.store.keyFile.read(e.value.slot) !== undefined) into.revoked.push(e.value.slot)
          if (toErase(recorder.store, e.value.slot)) into.erasures = true
        }
      }
    }
  }
  replicationDb(recorder.store).putSync(positionKey, sequence)
}

function applyGrant(recorder: Recorder, grant: KeyGrant, sequence: number, into: Applied): void {
  const wrapped = Buffer.from(grant.wrapped)
  // A host without the KEK that wrapped it must not take the shard over and serve it locked: it stops here (and so never catches up).
  if (!recorder.store.keys.opensWrapped(grant.slot, wrapped)) {
    throw new Error(`the key grant of slot ${grant.slot} (stream sequence ${sequence}) does not open with this host's KEK file; every host needs the cluster's KEK file (docs/manual/cluster.md)`)
  }
  recorder.rawSlotWrite(grant.slot, wrapped)
  // The slot's former grant message (a previous KEK's wrap, or a grant whose batch never came) is superseded.
  if (toErase(recorder.store, grant.slot)) into.erasures = true
  replicationDb(recorder.store).putSync(grantKey(grant.slot), sequence)
}

/** Moves the slot's grant record, if any, to the erasures; returns whether there was one. */
function toErase(store: ShardStore, slot: number): boolean {
  const db = replicationDb(store)
  const sequence = db.get(grantKey(slot))
  if (sequence === undefined) return false
  db.removeSync(grantKey(slot))
  db.putSync(`${ERASE}${sequence}`, slot)
  return true
}

function isRevoked(value: unknown): value is { status: 'revoked'; slot: number } {
  const v = value as { status?: unknown; slot?: unknown } | null
  return v !== null && typeof v === 'object' && v.status === 'revoked' && typeof v.slot === 'number'
}

/** A batch's effects alone (the tests' shorthand): the revoked slots it left to destroy. */
export function applyEffects(recorder: Recorder, effects: Effect[], sequence: number): number[] {
  const into: Applied = { revoked: [], erasures: false }
  applyEntry(recorder, { node: '', epoch: 0, effects }, sequence, into)
  return into.revoked
}
