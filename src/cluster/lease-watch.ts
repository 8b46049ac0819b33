// The front thread's view of the lease bucket: a KV watch feeding the
// LeaseMap with every shard's lease as it is written, renewed or deleted,
// and a poll that reads every shard's lease a few times per lease period. A
// watch whose NATS server died may go silent without an error; the poll keeps
// the map right within a lease period whatever the watch missed, and has the
// watch made again when it finds it behind.
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import { LEASE_BUCKET, shardLeaseKey } from '../contract/cluster-names'
import { log } from '../telemetry/log'
import { type LeaseMap, parseLease, shardOfLeaseKey } from '../replication/lease-map'
import { setTimeout as sleep } from 'node:timers/promises'

/** Opens the bucket (the shard actors create it; until then, retries every second). */
async function openLeases(nc: NatsConnection, stopped: () => boolean): Promise<KV | undefined> {
  const kvm = new Kvm(nc)
  while (!stopped()) {
    try {
      const kv = await kvm.open(LEASE_BUCKET)
      await kv.status()
      return kv
    } catch {
      await sleep(1000)
    }
  }
  return undefined
}

/** What an entry of the bucket says of its shard's lease (undefined: deleted or absent). */
const leaseOf = (e: Pick<KvWatchEntry, 'operation' | 'string'>): ReturnType<typeof parseLease> => (e.operation === 'PUT' ? parseLease(e.string()) : undefined)

/** Follows the bucket until `stopped()`: the watch, and the poll of `shards` lease keys every third of a lease period. */
export async function watchLeases(nc: NatsConnection, leases: LeaseMap, shards: number, stopped: () => boolean): Promise<void> {
  const kv = await openLeases(nc, stopped)
  if (kv === undefined) return
  let watch: Awaited<ReturnType<KV['watch']>> | undefined
  // Bucket revisions are stream sequences, one count for all keys: the newest the watch brought, and the newest the last poll read.
  let watched = 0
  let polled = 0
  const poll = (async () => {
    while (!stopped()) {
      await sleep(Math.max(100, Math.floor(leases.leaseMs / 3)))
      // A whole poll period later, the watch has still not brought what the last poll read: it is stuck.
      if (watch !== undefined && watched < polled) {
        log.info(`cluster: the lease watch is behind the bucket (revision ${watched} < ${polled}); watching again`)
        watch.stop()
      }
      for (let shard = 0; shard < shards && !stopped(); shard++) {
        const entry = await kv.get(shardLeaseKey(shard)).catch(() => undefined)
        if (entry === undefined) continue // no answer now: the next poll asks again
        const revision = entry?.revision ?? 0
        polled = Math.max(polled, revision)
        // A revision not seen yet was written within the last poll period (renewals come more often than polls).
        if (revision > leases.revision(shard)) leases.seen(shard, entry === null ? undefined : leaseOf(entry), 0, revision)
      }
    }
  })()
  while (!stopped()) {
    try {
      watched = 0
      watch = await kv.watch({ key: 'shard.>' })
      for await (const e of watch) {
        if (stopped()) break
        const shard = shardOfLeaseKey(e.key)
        if (shard === undefined) continue
        // A value delivered from history is as old as the server says; a live update is new.
        // (server time against ours: skew only shortens or lengthens the first lease period seen)
        const ageMs = (e.delta ?? 0) === 0 ? 0 : Date.now() - e.created.getTime()
        watched = Math.max(watched, e.revision)
        leases.seen(shard, leaseOf(e), ageMs, e.revision)
      }
    } catch (err) {
      log.warn({ err }, 'cluster: the lease watch broke; watching again')
      await sleep(500)
    }
  }
  watch?.stop()
  await poll
}
