// The tests' view of the lease bucket: which host owns a tenant's shard. The
// hosts' shard actors take and renew the leases themselves
// (workers/actor/replication); this only reads them.
import { connect } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/nats-core'
import { Kvm, type KV } from '@nats-io/kv'
import { LEASE_BUCKET, shardLeaseKey, type LeaseValue } from '../../../src/contract/cluster-names'
import { leaseBucketOptions } from '../../../src/replication/lease-bucket'
import { preferredHost } from '../../../src/replication/placement'
import { shardOf } from '../../../src/shards/tenant-hash'
import type { Graph } from '../../helpers/client'
import { clusterForFile, clusterSkip, type Cluster, type ClusterOptions, type Host } from './cluster'
import { sleep } from '../../../bench/wait'
import { clusterLines } from './recovery'

/** The shard count the test hosts run with (the server's default). */
export const SHARDS = 4

export interface Leases {
  nc: NatsConnection
  kv: KV
  /** The node each shard's lease names now (undefined: none). */
  owners(): Promise<(string | undefined)[]>
  /** Waits (up to 30 s) until every shard is owned by its preferred host among all the cluster's hosts. */
  placed(): Promise<void>
  /** The host whose lease on the tenant's shard the bucket holds now (waits up to 20 s for one). */
  ownerOf(tenant: string): Promise<Host>
  stop(): Promise<void>
}

async function leaseOwner(kv: KV, shard: number): Promise<string | undefined> {
  const entry = await kv.get(shardLeaseKey(shard))
  return entry?.operation === 'PUT' ? entry.json<LeaseValue>().node : undefined
}

/** Opens the bucket and waits (up to 30 s) until every shard is owned by its preferred host among the running ones (src/replication/placement.ts). */
export async function leasesFor(cluster: Cluster, shards = SHARDS): Promise<Leases> {
  const nc = await connect({ servers: cluster.natsUrls, maxReconnectAttempts: -1 })
  const kv = await new Kvm(nc).create(LEASE_BUCKET, leaseBucketOptions(3))
  const owners = async (): Promise<(string | undefined)[]> => Promise.all(Array.from({ length: shards }, (_, s) => leaseOwner(kv, s)))
  const nodes = cluster.hosts.map((h) => h.nodeId)
  const wanted = Array.from({ length: shards }, (_, s) => preferredHost(s, nodes))
  const placed = async (): Promise<void> => {
    const since = Date.now()
    // A JetStream cluster just formed may time a read out while the bucket's stream elects its leader: asked again.
    while (JSON.stringify(await owners().catch(() => undefined)) !== JSON.stringify(wanted)) {
      if (Date.now() > since + 30_000) {
        const lines = clusterLines(cluster.hosts, since - 30_000).join('\n')
        throw new Error(`the shards are not placed after 30 s: ${JSON.stringify(await owners())} (expected ${JSON.stringify(wanted)}); the hosts' cluster log:\n${lines}`)
      }
      await sleep(200)
    }
  }
  try {
    await placed()
  } catch (err) {
    // Nobody gets this view to stop: its connection would keep the test process alive until tap's timeout.
    await nc.close()
    throw err
  }
  return {
    nc, kv, owners, placed,
    async ownerOf(tenant) {
      const until = Date.now() + 20_000
      for (;;) {
        const node = await leaseOwner(kv, shardOf(tenant, shards))
        const host = cluster.hosts.find((h) => h.nodeId === node)
        if (host !== undefined) return host
        if (Date.now() > until) throw new Error(`no host owns the shard of ${tenant}`)
        await sleep(200)
      }
    },
    async stop() {
      await nc.close()
    },
  }
}

/** A test file's cluster, its skip reason, and its lease view (opened by the first test that asks; closed at teardown). */
export function clusterFile(tap: Parameters<typeof clusterForFile>[0], options: ClusterOptions = {}): { skip: string | false; cluster: Cluster; leases: () => Promise<Leases> } {
  const skip = clusterSkip()
  const cluster = clusterForFile(tap, skip, options)
  let opened: Promise<Leases> | undefined
  // A lease view that never opened (the placement timed out) has nothing to stop, and must not keep the cluster's own teardown from running.
  tap.teardown(async () => { await opened?.then((l) => l.stop(), () => undefined) })
  return { skip, cluster, leases: () => (opened ??= leasesFor(cluster)) }
}

/** The owner of the tenant's shard and another host, each with its Graph of tenant demo. */
export async function ownerAndOther(cluster: Cluster, leases: Leases, graphs: readonly Graph[], tenant = 'demo'): Promise<{ owner: Host; other: Host; viaOwner: Graph; viaOther: Graph }> {
  const owner = await leases.ownerOf(tenant)
  const other = cluster.hosts.find((h) => h !== owner)!
  return { owner, other, viaOwner: graphs[cluster.hosts.indexOf(owner)]!, viaOther: graphs[cluster.hosts.indexOf(other)]! }
}
