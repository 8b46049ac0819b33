// One shard's LMDB environment and its databases. The actor that owns a
// shard is its one writer; every other actor opens it for reading only
// (`reader`; docs/design/architecture.md, "Reads on every core").
import { open, RootDatabase, Database, type DatabaseOptions } from 'lmdb'
import { join } from 'node:path'
import { KEY_OPTIONS } from '../../src/contract/key-encoding'
import type { WrappingKeys } from '../../src/crypto/kek-file'
import { noteStorageDir } from '../../src/core/storage-failure'
import { DataKeys } from '../crypto/data-keys'
import { KeyFile } from '../crypto/key-file'
import type { Key } from './keys'
import type { ConsentRecord, EventHead, ShardValues } from './schema'
import { forgetKeptReads } from './kept-reads'
import { countCommits } from './write-generations'
import { journalDir, ShardJournal } from '../journal/shard-journal'
import { ShardDamage } from './shard-files'
import { dropCheckpoint, restoreCheckpoint, SyncedSnapshot } from './lmdb-checkpoint'

/** Head and count writes a group commit's batch holds back to its end (deferred-writes.ts). */
export interface DeferredWrites {
  readonly heads: Map<string, EventHead>
  /** By the key's JSON: the key and the count it ends at. */
  readonly counts: Map<string, { key: Key; value: number }>
}

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
  /** the element's neighbours chunk, rendered from `p` (chunk-cache.ts) */
  chunk?: RenderedChunk
}

/**
 * An element's chunk as a neighbours read renders it, kept with what it was
 * rendered from: valid only while the stored bytes are those (`head` and the
 * entry's fingerprint) and the owner's consent still shows the same
 * properties (`hidden`, compared by identity: every consent change makes a
 * new record).
 */
export interface RenderedChunk {
  text: string
  /** the stored value's bytes before its sealed field (owner, key slot, times, as encoded) */
  head: Buffer
  /** the owner consent's revokedProperties it was rendered under (none for tenant-owned data) */
  hidden: readonly string[] | undefined
}

type Db<Name extends keyof ShardValues> = Database<ShardValues[Name], Key>

export interface ShardStore {
  readonly shard: number
  readonly env: RootDatabase
  /** The shard's databases; schema.ts gives each one's key layout and value type. */
  readonly nodes: Db<'nodes'>
  readonly relations: Db<'relations'>
  readonly adjacency: Db<'adjacency'>
  readonly counts: Db<'counts'>
  readonly index: Db<'index'>
  readonly owned: Db<'owned'>
  readonly consents: Db<'consents'>
  readonly subjects: Db<'subjects'>
  readonly ownedRelations: Db<'ownedRelations'>
  readonly keySlots: Db<'keySlots'>
  readonly events: Db<'events'>
  readonly eventHeads: Db<'eventHeads'>
  readonly schedules: Db<'schedules'>
  readonly scheduleIds: Db<'scheduleIds'>
  /**
   * Consent records and tenant key slots read on every decrypt, kept in
   * memory: the actor is their only writer. Cleared when a transaction fails.
   */
  readonly cache: {
    /** tenant -> consent reference -> record */
    consents: Map<string, Map<string, ConsentRecord>>
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
  /**
   * Opened by a thread that does not own the shard: it only reads, and
   * caches only what a consent change can drop (forgetConsent in
   * consents.ts) or what never changes; the event-log head is read afresh.
   */
  readonly reader: boolean
  /** A journaled shard's writer: the last checkpoint's snapshot, held (lmdb-checkpoint.ts). */
  readonly synced?: SyncedSnapshot
  /** Set while a group commit's batch runs: head and count writes wait for its end (deferred-writes.ts). */
  deferred?: DeferredWrites
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


/**
 * `wrapping`: what wraps the data keys (the master key; in cluster mode the KEKs).
 * `journaled`: the shard has a journal in front of it (one host, no cluster):
 * LMDB then commits without syncing and is synced at the journal's
 * checkpoints (lmdb-checkpoint.ts); every thread that opens it says so, as
 * one process shares one environment.
 */
export function openShard(dataDir: string, shard: number, wrapping: Buffer | WrappingKeys, maxEventsPerTenant = 1_000_000, reader = false, journaled = false): ShardStore {
  const dir = shardPath(dataDir, shard)
  noteStorageDir(dir)
  if (!reader) {
    // Another process's commits since the last checkpoint may be torn by a power loss: that checkpoint's snapshot opens.
    restoreCheckpoint(dir)
    if (!journaled) {
      // A writer without the journal (a tool, cluster mode) would leave what the journal holds unreplayed.
      if (ShardJournal.holdsRecords(journalDir(dir))) {
        throw new ShardDamage(`shard ${shard}: the server did not stop cleanly and the shard's journal holds writes its LMDB lacks; start the server once without cluster mode (it replays them), stop it, then try again`)
      }
      // It syncs every commit, and a checkpoint could not hold what it writes.
      dropCheckpoint(dir)
    }
  }
  const env = open({
    path: dir,
    maxDbs: 32,
    // Journaled: durable by the journal, LMDB synced at checkpoints. Else commits overlap with the
    // previous sync, and writes are acknowledged only once `env.flushed` resolves (docs/design/architecture.md).
    ...(journaled ? { noSync: true } : { overlappingSync: true }),
  })
  const sub = <Name extends keyof ShardValues>(name: Name): Db<Name> => env.openDB<ShardValues[Name], Key>(name, DB_OPTIONS)
  const keyFile = new KeyFile(join(shardPath(dataDir, shard), 'keys.bin'), reader)
  const databases = {
    nodes: sub('nodes'),
    relations: sub('relations'),
    adjacency: sub('adjacency'),
    counts: sub('counts'),
    index: sub('index'),
    owned: sub('owned'),
    consents: sub('consents'),
    subjects: sub('subjects'),
    ownedRelations: sub('ownedRelations'),
    keySlots: sub('keySlots'),
    events: sub('events'),
    eventHeads: sub('eventHeads'),
    schedules: sub('schedules'),
    scheduleIds: sub('scheduleIds'),
  }
  if (!reader) countCommits(shard, env, Object.values(databases), () => forgetKeptReads(shard))
  let synced: SyncedSnapshot | undefined
  if (journaled && !reader) {
    synced = new SyncedSnapshot(env, dir)
    synced.takeNow()
  }
  return {
    shard,
    env,
    ...databases,
    cache: { consents: new Map(), tenantSlots: new Map(), plain: THREAD_PLAIN_CACHE, eventHeads: new Map() },
    keys: new DataKeys(keyFile, wrapping),
    keyFile,
    maxEventsPerTenant,
    reader,
    synced,
  }
}

/**
 * The decrypted-element cache, one per thread for all the shards it opens
 * (a module is loaded once per worker thread): its bound (PLAIN_CACHE_LIMIT)
 * is what one thread may hold, and one busy tenant, whose elements are all in
 * one shard, can use all of it. Element ids name their tenant, and every entry
 * is checked against the stored bytes and its shard's keys before use
 * (sealing.ts, chunk-cache.ts), so shards cannot see each other's entries.
 */
const THREAD_PLAIN_CACHE = new Map<string, PlainEntry>()

/** After a failed transaction: the caches may hold what it did not commit. */
export function forgetUncommitted(store: ShardStore): void {
  for (const cache of Object.values(store.cache)) cache.clear()
  forgetKeptReads()
}

export async function closeShard(store: ShardStore): Promise<void> {
  // A shard opened again later (a restore, a migration) starts with nothing cached of it.
  store.cache.plain.clear()
  forgetKeptReads()
  store.synced?.release()
  await store.env.flushed
  await store.env.close()
  store.keyFile.close()
}
