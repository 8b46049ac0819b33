// The auth store as a replicated unit (docs/manual/cluster.md, "The authorization
// service"): the same replica as a graph shard's (src/replication/replica.ts)
// over the auth store, its lease AUTH_LEASE_KEY and its stream AUTH_STREAM.
// The owner's writes are recorded (auth-recorder.ts), grouped into batches
// (auth-batches.ts), appended with the expected last sequence and a message
// id, and only then committed with the stream sequence; every other host
// follows the stream into its own auth store, and the first caught-up one to
// see the lease expire claims it. No placement: whoever holds the lease keeps
// it until it dies, is cut off or shuts down (any host may claim a free one).
// The owner snapshots the store as a shard's owner does (auth-snapshots.ts)
// and purges the stream below the oldest kept snapshot; a host the purge
// passed, or an empty one, restores the newest snapshot before it follows.
import { ABORT, type Database } from 'lmdb'
import type { KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import type { AuthStore } from '../auth/models/auth-store'
import { replicateWrites } from '../auth/models/auth-store'
import { AUTH_LEASE_KEY, AUTH_STREAM, AUTH_SUBJECT, type LeaseValue } from '../contract/cluster-names'
import type { ClusterOptions } from '../config/cluster-options'
import { ApiError } from '../core/errors'
import { log } from '../telemetry/log'
import type { Effect } from '../replication/effects'
import { Replica, type ReplicatedUnit, type UnitHost } from '../replication/replica'
import { SnapshotStore } from '../replication/snapshot-store'
import { Snapshots } from '../replication/snapshots'
import { StreamLog } from '../replication/stream-log'
import { AuthBatches } from './auth-batches'
import { AuthRecorder } from './auth-recorder'
import { APPLIED_KEY, appliedDb, authSnapshotSource } from './auth-snapshots'

export interface AuthReplicaOptions {
  nc: NatsConnection
  kv: KV
  options: ClusterOptions
  store: AuthStore
  /** The data directory (the auth store's snapshots are copied beside it, in `snapshots/`). */
  dataDir: string
  url: string
  /** Told each time this host starts serving the auth store (after its claim entry; writes are taken from then on). */
  gained(): void
}

export interface AuthReplica {
  servesHere(): boolean
  /** The holder of the auth lease this host believes in (itself while it serves). */
  owner(): LeaseValue | undefined
  close(): Promise<void>
}

/** Every record of every database, after clearing it: what a store held before its stream existed. */
function snapshot(recorder: AuthRecorder): Effect[] {
  const effects: Effect[] = []
  for (const [name, { db }] of recorder.raw) {
    effects.push({ cleared: name })
    for (const { key, value } of db.getRange()) effects.push({ db: name, key, value })
  }
  return effects
}

function unitOf(store: AuthStore, recorder: AuthRecorder): ReplicatedUnit {
  const replication: Database<number, string> = appliedDb(store.env)
  return {
    name: 'the auth store', id: 'auth', leaseKey: AUTH_LEASE_KEY, env: recorder.env, recorder,
    appliedSequence: () => replication.get(APPLIED_KEY) ?? 0,
    apply(appended) {
      for (const { entry, sequence } of appended) {
        if ('grant' in entry) throw new Error('an auth store stream entry grants a key')
        for (const e of entry.effects) {
          if ('slot' in e) throw new Error('an auth store stream entry writes a key slot')
          const raw = 'cleared' in e ? recorder.raw.get(e.cleared) : recorder.raw.get(e.db)
          if (raw === undefined) throw new Error(`an auth store stream entry names an unknown database "${'cleared' in e ? e.cleared : e.db}"`)
          if ('cleared' in e) for (const key of [...raw.db.getKeys()]) raw.remove(key)
          else if (e.removed === true) raw.remove(e.key)
          else raw.put(e.key, e.value)
        }
        replication.putSync(APPLIED_KEY, sequence)
      }
      return undefined
    },
    // lmdb-js's object cache (the clients table) may hold a rolled-back batch's values.
    forget() {
      for (const { db } of recorder.raw.values()) (db as { cache?: { clear(): void } }).cache?.clear()
    },
    snapshot: () => snapshot(recorder),
  }
}

/** The generic replica with the auth store's snapshots: taken on the owner's beat, restored before a tail. */
class AuthStoreReplica extends Replica {
  constructor(private readonly authUnit: ReplicatedUnit, stream: StreamLog, host: UnitHost, private readonly snapshots: Snapshots) {
    super(authUnit, stream, host)
  }

  protected override ownerBeat(): void {
    if (this.serves()) this.snapshots.tick(this.applied, this.epoch, () => this.serves())
  }

  /** From what LMDB holds, not memory: a restore cut short left it at 0 there, and must run again. */
  protected override async beforeTail(): Promise<void> {
    this.applied = this.authUnit.appliedSequence()
    await this.snapshots.restoreIfBehind(this.applied)
    this.applied = this.authUnit.appliedSequence()
  }

  /** The auth stream has no erased entries: a hole is a purge, and a kept snapshot newer than this host says so. */
  protected override async purgedPast(applied: number): Promise<boolean> {
    return this.snapshots.passedBy(applied)
  }
}

export async function startAuthReplica(o: AuthReplicaOptions): Promise<AuthReplica> {
  const { options } = o
  const recorder = new AuthRecorder(o.store)
  const timeoutMs = Math.max(1000, options.leaseMs)
  const stream = await StreamLog.openLog(o.nc, AUTH_STREAM, AUTH_SUBJECT, options.servers.length, timeoutMs)
  const unit = unitOf(o.store, recorder)
  const snapshotHost = { nodeId: options.nodeId, warn: (message: string, err?: unknown) => log.warn(err === undefined ? {} : { err }, message), info: (message: string) => log.info(message) }
  const snapshots = new Snapshots(authSnapshotSource(o.store, recorder, o.dataDir, () => unit.forget()), stream, await SnapshotStore.open(o.nc, options.servers.length, timeoutMs, snapshotHost.warn), options.snapshots, snapshotHost)
  const replica = new AuthStoreReplica(unit, stream, {
    kv: o.kv, nodeId: options.nodeId, url: o.url, leaseMs: options.leaseMs, durability: options.durability, now: () => performance.now(),
    ownership: (owned, epoch) => {
      if (!owned) return
      log.info(`cluster: ${options.nodeId} serves the authorization service (auth lease epoch ${epoch})`)
      o.gained()
    },
    unavailable: (message, retryAfter) => new ApiError('service_unavailable', message, { headers: { 'retry-after': String(retryAfter) } }),
    warn: snapshotHost.warn,
    info: snapshotHost.info,
  }, snapshots)
  const batches = new AuthBatches(recorder, (run) => replica.write(run, ABORT))
  replicateWrites(o.store, () => batches.settle())
  await replica.start()
  // No placement for the auth store: any host claims a free lease at once, an expired one after a full lease period.
  const beat = { preferredHere: true, handOverTo: undefined }
  await replica.beat(beat)
  const timer = setInterval(() => void replica.beat(beat), Math.max(50, Math.min(250, Math.floor(options.leaseMs / 4))))
  timer.unref()
  return {
    servesHere: () => replica.serves(),
    owner: () => replica.owner(),
    async close() {
      clearInterval(timer)
      await replica.close()
    },
  }
}
