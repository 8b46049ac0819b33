// The lease bucket (LEASE_BUCKET): opened, or created by whichever host comes
// first, with the leases' settings. Used by the front thread (auth lease,
// lease watch) and by the shard actors (shard leases, presence keys).
//
// It is kept in NATS servers' memory, replicated like the streams: a lease
// lives a few seconds and is renewed all the time, so nothing of it needs a
// disk, and leases must go on being renewed when the file store is full
// (writes are then refused with a 503; reads and ownership carry on). A
// bucket lost with every NATS server at once is made again by the next host
// that misses it (ensureLeaseBucket).
import type { NatsConnection } from '@nats-io/nats-core'
import { StorageType } from '@nats-io/jetstream'
import { Kvm, type KV, type KvOptions } from '@nats-io/kv'
import { LEASE_BUCKET } from '../contract/cluster-names'
import { untilItWorks } from './start-retry'

/** A KV bucket, opened, or created with these settings by whichever host comes first. */
export async function openBucket(nc: NatsConnection, name: string, replicas: number, options: Partial<KvOptions> = {}): Promise<KV> {
  const kvm = new Kvm(nc)
  try {
    const kv = await kvm.open(name)
    await kv.status()
    return kv
  } catch {
    return kvm.create(name, { replicas, history: 1, ...options })
  }
}

/** The lease bucket's settings, for `servers` NATS servers (tests that open the bucket first use them too). */
export function leaseBucketOptions(servers: number): Partial<KvOptions> {
  return { replicas: Math.min(3, servers), history: 1, storage: StorageType.Memory }
}

const openLeaseBucket = (nc: NatsConnection, servers: number): Promise<KV> => openBucket(nc, LEASE_BUCKET, Math.min(3, servers), leaseBucketOptions(servers))

export function leaseBucket(nc: NatsConnection, servers: number): Promise<KV> {
  return untilItWorks(() => openLeaseBucket(nc, servers), () => nc.isClosed())
}

/** After a lease operation failed: makes the bucket again if it is gone (every NATS server restarted); other failures change nothing. */
export async function ensureLeaseBucket(nc: NatsConnection, servers: number): Promise<void> {
  await openLeaseBucket(nc, servers).catch(() => undefined)
}
