// The front thread's view of the lease bucket: a KV watch feeding the
// LeaseMap with every shard's lease as it is written, renewed or deleted.
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/nats-core'
import { LEASE_BUCKET } from '../contract/cluster-names'
import { log } from '../telemetry/log'
import { type LeaseMap, parseLease, shardOfLeaseKey } from '../replication/lease-map'

/** Opens the bucket (the shard actors create it; until then, retries every second) and follows it until `stopped()`. */
export async function watchLeases(nc: NatsConnection, leases: LeaseMap, stopped: () => boolean): Promise<void> {
  const kvm = new Kvm(nc)
  let kv: KV | undefined
  while (kv === undefined && !stopped()) {
    try {
      kv = await kvm.open(LEASE_BUCKET)
      await kv.status()
    } catch {
      kv = undefined
      await new Promise((r) => setTimeout(r, 1000))
    }
  }
  while (kv !== undefined && !stopped()) {
    try {
      const watch = await kv.watch({ key: 'shard.>' })
      for await (const e of watch) {
        if (stopped()) {
          watch.stop()
          break
        }
        const shard = shardOfLeaseKey(e.key)
        if (shard === undefined) continue
        // A value delivered from history is as old as the server says; a live update is new.
        // (server time against ours: skew only shortens or lengthens the first lease period seen)
        const ageMs = (e.delta ?? 0) === 0 ? 0 : Date.now() - e.created.getTime()
        leases.seen(shard, e.operation === 'PUT' ? parseLease(e.string()) : undefined, ageMs)
      }
    } catch (err) {
      log.warn({ err }, 'cluster: the lease watch broke; watching again')
      await new Promise((r) => setTimeout(r, 500))
    }
  }
}
