// Cluster mode in a shard actor (docs/design/replication.md, "Leases and replication"),
// loaded by shard-actor.ts with a dynamic import only when ActorConfig.cluster
// is set: the actor's NATS connection, a ShardReplica per shard it writes,
// the beat that renews, watches, claims and hands over their leases (each
// shard goes to its preferred live host: src/replication/placement.ts), and the
// replicated transaction its
// group commit and timers run their writes in.
import { ABORT } from 'lmdb'
import { connect } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/nats-core'
import type { KV } from '@nats-io/kv'
import type { ClusterOptions } from '../../../src/config/cluster-options'
import { followReportKey, hostPresenceKey } from '../../../src/contract/cluster-names'
import { ensureLeaseBucket, leaseBucket } from '../../../src/replication/lease-bucket'
import { withTimeout } from '../../../src/replication/with-timeout'
import { preferredHost } from '../../../src/replication/placement'
import { writeFollowReports, type FollowReport } from '../../../src/replication/catch-up'
import type { ShardStore } from '../../store/shard-store'
import { CoalescedWrites } from '../../../src/replication/coalesced-writes'
import { Recorder } from './recorder'
import { ShardLog } from './shard-log'
import { ShardReplica } from './shard-replica'
import { SnapshotStore } from '../../../src/replication/snapshot-store'
import { Snapshots } from '../../../src/replication/snapshots'
import { shardSnapshotSource } from './snapshot-files'

export interface ReplicationHooks {
  ownership(shard: number, owned: boolean, epoch: number): void
  destroyKeys(store: ShardStore, slots: number[]): void
  warn(message: string, err?: unknown): void
  info(message: string): void
}

export interface Replication {
  /** The group commit's transaction: run, recorded, appended, committed (shard-replica.ts). */
  transact<T>(store: ShardStore, run: () => T): Promise<T>
  close(): Promise<void>
}

/**
 * Presence is only a placement preference (an expired shard lease is anyone's
 * at once), so a host counts as live for two lease periods after its key last
 * changed: on a loaded machine a slow presence beat must not make it flicker.
 */
const PRESENCE_PERIODS = 2

/** Live hosts: presence keys whose revision changed within PRESENCE_PERIODS lease periods, by this host's clock. */
class Presence {
  private readonly seen = new Map<string, { revision: number; at: number }>()

  constructor(private readonly kv: KV, private readonly nodeId: string, private readonly leaseMs: number, private readonly now: () => number, private readonly info: (message: string) => void) {}

  /** Every step bounded by a lease period: a beat that never settled (a listing whose consumer stalled) stopped every later one, and with them this actor's hand-overs. */
  async beat(): Promise<void> {
    await withTimeout(this.kv.put(hostPresenceKey(this.nodeId), String(Date.now())), this.leaseMs, 'writing the presence key')
    const keys: string[] = []
    const listing = await withTimeout(this.kv.keys('host.>'), this.leaseMs, 'listing the presence keys')
    try {
      await withTimeout((async () => { for await (const k of listing) keys.push(k) })(), this.leaseMs, 'listing the presence keys')
    } finally {
      listing.stop()
    }
    for (const key of keys) {
      const entry = await withTimeout(this.kv.get(key), this.leaseMs, 'reading a presence key')
      if (entry === null || entry.operation !== 'PUT') {
        // A host that shut down deleted its key: gone now, not after PRESENCE_PERIODS.
        if (this.seen.delete(key)) this.info(`cluster: ${this.nodeId} sees ${key.slice('host.'.length)} leave`)
        continue
      }
      const t = this.now()
      const before = this.seen.get(key)
      if (before === undefined) {
        if (key !== hostPresenceKey(this.nodeId)) this.info(`cluster: ${this.nodeId} sees ${key.slice('host.'.length)} live`)
        this.seen.set(key, { revision: entry.revision, at: t })
      }
      else if (before.revision !== entry.revision) this.seen.set(key, { revision: entry.revision, at: t })
    }
  }

  /** A clean shutdown: the key goes, so the other hosts prefer one another for this host's shards at once. */
  async leave(): Promise<void> {
    await this.kv.delete(hostPresenceKey(this.nodeId))
  }

  /** Node ids live now (this host always). */
  live(): string[] {
    const t = this.now()
    const out = [this.nodeId]
    for (const [key, { at }] of this.seen) {
      const node = key.slice('host.'.length)
      if (node !== this.nodeId && t - at < PRESENCE_PERIODS * this.leaseMs) out.push(node)
    }
    return out
  }
}

/**
 * Starts replication, trying again until it runs: on a JetStream cluster that
 * has just formed, opening a stream or a bucket can time out while their
 * leaders are elected, and an actor whose replication did not start would
 * never serve its shards (nor hand them back to this host).
 */
export async function startReplication(options: ClusterOptions, hostUrl: string, stores: ReadonlyMap<number, ShardStore>, hooks: ReplicationHooks): Promise<Replication> {
  for (let attempt = 1; ; attempt++) {
    const nc = await connect({
      servers: options.servers, name: `actor ${options.nodeId} ${[...stores.keys()].join(',')}`,
      maxReconnectAttempts: -1, reconnectTimeWait: 500, pingInterval: Math.max(1000, Math.floor(options.leaseMs / 2)), maxPingOut: 2,
    })
    try {
      return await startOn(nc, options, hostUrl, stores, hooks)
    } catch (err) {
      await nc.close().catch(() => undefined)
      hooks.warn(`cluster: replication of shards ${[...stores.keys()].join(', ')} did not start (attempt ${attempt}); trying again`, err)
      await new Promise((r) => setTimeout(r, Math.min(5000, 500 * attempt)))
    }
  }
}

async function startOn(nc: NatsConnection, options: ClusterOptions, hostUrl: string, stores: ReadonlyMap<number, ShardStore>, hooks: ReplicationHooks): Promise<Replication> {
  const now = (): number => performance.now()
  const timeoutMs = Math.max(1000, options.leaseMs)
  const kv = await leaseBucket(nc, options.servers.length)
  const presence = new Presence(kv, options.nodeId, options.leaseMs, now, hooks.info)
  const startedAt = now()
  const replicas = new Map<number, ShardReplica>()
  /** Each shard's group-commit batches, joined while its replica writes (src/replication/coalesced-writes.ts). */
  const coalesced = new Map<number, CoalescedWrites>()
  const host = {
    kv, nodeId: options.nodeId, url: hostUrl, leaseMs: options.leaseMs, durability: options.durability, now,
    ownership: hooks.ownership, destroyKeys: hooks.destroyKeys, warn: hooks.warn, info: hooks.info,
  }
  const snapshotStore = await SnapshotStore.open(nc, options.servers.length, timeoutMs, hooks.warn)
  try {
    for (const [shard, store] of stores) {
      const log = await ShardLog.open(nc, shard, options.servers.length, timeoutMs)
      const recorder = new Recorder(store, ABORT)
      const snapshots = new Snapshots(shardSnapshotSource(store, recorder), log, snapshotStore, options.snapshots, host)
      const replica = new ShardReplica(store, log, recorder, host, snapshots)
      replicas.set(shard, replica)
      coalesced.set(shard, new CoalescedWrites((run) => replica.write(run, ABORT)))
      await replica.start()
    }
  } catch (err) {
    // Nothing claimed yet (claims come from the beat below): the replicas started so far only follow; stopped for the retry.
    for (const r of replicas.values()) await r.close().catch(() => undefined)
    throw err
  }
  hooks.info(`cluster: ${options.nodeId} follows the streams of shards ${[...stores.keys()].join(', ')}`)

  let closed = false
  let presenceBusy = false
  // With the presence key, how far this host has followed each shard it does not serve: owners hand a shard over only to a host nearly caught up.
  const followReports = (): [string, FollowReport][] => [...replicas.values()].flatMap((r): [string, FollowReport][] => {
    const p = r.progress()
    return p === undefined ? [] : [[followReportKey(r.shard, options.nodeId), p]]
  })
  const presenceAndReports = async (): Promise<void> => {
    await presence.beat()
    await writeFollowReports(kv, followReports(), options.leaseMs)
  }
  /** The presence beat under way: a shutdown waits for it, so that no beat writes the key after it was deleted. */
  let presenceBeat: Promise<void> = presenceAndReports().catch(() => undefined)
  const presenceTimer = setInterval(() => {
    if (presenceBusy) return
    presenceBusy = true
    presenceBeat = presenceAndReports().catch(async (err: unknown) => {
      hooks.warn('cluster: the host presence key or its follow reports could not be written', err)
      await ensureLeaseBucket(nc, options.servers.length)
    }).finally(() => { presenceBusy = false })
  }, Math.max(100, Math.floor(options.leaseMs / 3)))
  // A few beats a second: an expired lease is seen within a fraction of a period.
  const beat = setInterval(() => {
    if (closed) return
    // In the first lease period, to see who else is there and what they hold, only leases handed to this host by name are claimed.
    if (now() - startedAt < options.leaseMs) {
      for (const r of replicas.values()) void r.beat({ preferredHere: false, handOverTo: undefined, handedOnly: true })
      return
    }
    const nodes = presence.live()
    // Each shard another host prefers is handed over once that host's follow report says it has nearly caught up (the replica reads it).
    for (const r of replicas.values()) {
      const preferred = preferredHost(r.shard, nodes)
      void r.beat({ preferredHere: preferred === options.nodeId, handOverTo: preferred !== options.nodeId ? preferred : undefined })
    }
  }, Math.max(50, Math.min(250, Math.floor(options.leaseMs / 4))))

  const coalescedOf = (store: ShardStore): CoalescedWrites => {
    const c = coalesced.get(store.shard)
    if (c === undefined) throw new Error(`shard ${store.shard} has no replica here`)
    return c
  }
  return {
    transact: (store, run) => coalescedOf(store).add(run),
    async close() {
      closed = true
      clearInterval(beat)
      clearInterval(presenceTimer)
      await presenceBeat
      await presence.leave().catch((err: unknown) => hooks.warn('cluster: the host presence key could not be deleted (it runs out instead)', err))
      // Each shard goes to the host that prefers it among the others, which claims it at once.
      const others = presence.live().filter((n) => n !== options.nodeId)
      for (const r of replicas.values()) await r.close(preferredHost(r.shard, others))
      await nc.drain().catch(() => undefined)
    },
  }
}
