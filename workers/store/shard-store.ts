// One shard's LMDB environment and its databases. An actor opens the shards
// it owns; nothing else touches them while it runs.
import { open, RootDatabase, Database, type DatabaseOptions } from 'lmdb'
import { join } from 'node:path'
import { KEY_OPTIONS } from '../../src/contract/key-encoding'
import { DataKeys } from '../crypto/data-keys'
import { KeyFile } from '../crypto/key-file'
import { migrateSlotCounter, type ConsentRecord } from './consents'
import type { EventHead, StoredEvent } from './events'
import type { ScheduleEntry } from './schedules'
import type { Key } from './keys'
import type { StoredElement } from './records'

/**
 * A decrypted element kept in memory (never on disk), valid only while the
 * stored value has the owner, key slot and sealed fingerprint (length, nonce,
 * tag: workers/crypto/seal.ts) it was made from. It is used only after the
 * consent checks pass, and dropped when its consent is revoked. Keeping the
 * fingerprint rather than the sealed bytes halves the cache's memory.
 */
export interface PlainEntry {
  o: string
  k: number
  f: string
  p: string
}

export interface ShardStore {
  readonly shard: number
  readonly env: RootDatabase
  /** [tenant, ns, type, id] -> node */
  readonly nodes: Database<StoredElement, Key>
  /** [tenant, from..., to..., rel...] -> relation */
  readonly relations: Database<StoredElement, Key>
  /** [tenant, owner..., neighbour..., direction, rel...] -> 1 */
  readonly adjacency: Database<number, Key>
  /** [tenant, ns, type] -> number of nodes */
  readonly counts: Database<number, Key>
  /** [tenant, ns, type, property, term, id] -> 1 */
  readonly index: Database<number, Key>
  /** [tenant, consentReference] -> consent */
  readonly consents: Database<ConsentRecord, Key>
  /** [tenant] -> key slot of the tenant's own data key; ['@nextSlot'] -> next free slot (keys.ts) */
  readonly keySlots: Database<number, Key>
  /** [tenant, sequence] -> event; [tenant] -> sequence range kept */
  readonly events: Database<StoredEvent, Key>
  readonly eventHeads: Database<EventHead, Key>
  /** [dueAt, tenant, scheduleId] -> schedule; [tenant, scheduleId] -> dueAt */
  readonly schedules: Database<ScheduleEntry, Key>
  readonly scheduleIds: Database<number, Key>
  /**
   * Consent records and tenant key slots read on every decrypt, kept in
   * memory: the actor is their only writer. Cleared when a transaction fails.
   */
  readonly cache: {
    consents: Map<string, ConsentRecord>
    tenantSlots: Map<string, number>
    plain: Map<string, PlainEntry>
    /** tenant -> the event log's head, read on every appended event */
    eventHeads: Map<string, EventHead>
  }
  /** The data keys, in the key file beside the environment (workers/crypto/key-file.ts says why). */
  readonly keys: DataKeys
  readonly keyFile: KeyFile
  /** Count retention of each tenant's event log (EVENT_RETENTION_COUNT), kept exactly as events are appended. */
  readonly maxEventsPerTenant: number
}

/**
 * Values are plain msgpack maps. msgpackr's default records carry their
 * structure inline without a shared structure table, and building that
 * structure on every read cost more than the read; a shared table would be
 * written outside our transactions. lmdb-js passes msgpackr options through
 * (its typings do not list them).
 */
export const VALUE_ENCODING = { encoding: 'msgpack', useRecords: false, mapsAsObjects: true } as DatabaseOptions

/** Every shard database: msgpack values, and keys of any length and content in order (src/contract/key-encoding.ts). */
export const DB_OPTIONS: DatabaseOptions = { ...VALUE_ENCODING, ...KEY_OPTIONS }

export function shardPath(dataDir: string, shard: number): string {
  return join(dataDir, 'shards', String(shard))
}

export function openShard(dataDir: string, shard: number, masterKey: Buffer, maxEventsPerTenant = 1_000_000): ShardStore {
  const env = open({
    path: shardPath(dataDir, shard),
    maxDbs: 16,
    // Commits overlap with the previous sync; writes are acknowledged only once
    // `env.flushed` resolves (docs/architecture.md: durable before the answer).
    overlappingSync: true,
  })
  const sub = <V>(name: string) => env.openDB<V, Key>(name, DB_OPTIONS)
  const keyFile = new KeyFile(join(shardPath(dataDir, shard), 'keys.bin'))
  const store: ShardStore = {
    shard,
    env,
    nodes: sub<StoredElement>('nodes'),
    relations: sub<StoredElement>('relations'),
    adjacency: sub<number>('adjacency'),
    counts: sub<number>('counts'),
    index: sub<number>('index'),
    consents: sub<ConsentRecord>('consents'),
    keySlots: sub<number>('keySlots'),
    events: sub<StoredEvent>('events'),
    eventHeads: sub<EventHead>('eventHeads'),
    schedules: sub<ScheduleEntry>('schedules'),
    scheduleIds: sub<number>('scheduleIds'),
    cache: { consents: new Map(), tenantSlots: new Map(), plain: new Map(), eventHeads: new Map() },
    keys: new DataKeys(keyFile, masterKey),
    keyFile,
    maxEventsPerTenant,
  }
  migrateSlotCounter(store)
  return store
}

/** After a failed transaction: the caches may hold what it did not commit. */
export function forgetUncommitted(store: ShardStore): void {
  for (const cache of Object.values(store.cache)) cache.clear()
}

export async function closeShard(store: ShardStore): Promise<void> {
  await store.env.flushed
  await store.env.close()
  store.keyFile.close()
}
