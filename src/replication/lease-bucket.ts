// The lease bucket (LEASE_BUCKET): opened, or created by whichever host comes
// first, with the leases' settings. Used by the front thread (auth lease,
// lease watch) and by the shard actors (shard leases).
import type { NatsConnection } from '@nats-io/nats-core'
import { Kvm, type KV } from '@nats-io/kv'
import { LEASE_BUCKET } from '../contract/cluster-names'
import { untilItWorks } from './start-retry'

/** A KV bucket, opened, or created with these settings by whichever host comes first. */
export async function openBucket(nc: NatsConnection, name: string, replicas: number): Promise<KV> {
  const kvm = new Kvm(nc)
  try {
    const kv = await kvm.open(name)
    await kv.status()
    return kv
  } catch {
    return kvm.create(name, { replicas, history: 1 })
  }
}

export function leaseBucket(nc: NatsConnection, servers: number): Promise<KV> {
  return untilItWorks(() => openBucket(nc, LEASE_BUCKET, Math.min(3, servers)), () => nc.isClosed())
}
