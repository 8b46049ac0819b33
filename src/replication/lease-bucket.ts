// The lease bucket (LEASE_BUCKET): opened, or created by whichever host comes
// first, with the leases' settings. Used by the front thread (auth lease,
// lease watch) and by the shard actors (shard leases).
import type { NatsConnection } from '@nats-io/nats-core'
import { Kvm, type KV } from '@nats-io/kv'
import { LEASE_BUCKET } from '../contract/cluster-names'
import { untilItWorks } from './start-retry'

export function leaseBucket(nc: NatsConnection, servers: number): Promise<KV> {
  const kvm = new Kvm(nc)
  return untilItWorks(async () => {
    try {
      const kv = await kvm.open(LEASE_BUCKET)
      await kv.status()
      return kv
    } catch {
      return kvm.create(LEASE_BUCKET, { replicas: Math.min(3, servers), history: 1 })
    }
  }, () => nc.isClosed())
}
