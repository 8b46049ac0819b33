// Until the shard actors hold leases themselves (the core part of cluster
// mode), a test names the owners: it writes every shard's lease to the lease
// bucket and renews it, as an owner would. When the hosts already write
// leases, it writes nothing and leaves ownership to them.
import { connect } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/nats-core'
import { Kvm, type KV } from '@nats-io/kv'
import { LEASE_BUCKET, shardLeaseKey, type LeaseValue } from '../../../src/contract/cluster-names'
import { shardOf } from '../../../src/shard/tenant-hash'
import type { Graph } from '../../helpers/client'
import { clusterForFile, clusterSkip, type Cluster, type ClusterOptions, type Host } from './cluster'

export interface Leases {
  nc: NatsConnection
  kv: KV
  /** Whether this helper writes the leases (false: the hosts do). */
  standIn: boolean
  /** Makes `host` the owner of every shard (stand-in mode). */
  ownAll(host: Host | undefined): void
  /** The host whose lease on the tenant's shard the bucket holds now (waits up to 20 s for one). */
  ownerOf(tenant: string): Promise<Host>
  stop(): Promise<void>
}

export async function leasesFor(cluster: Cluster, shards = 4): Promise<Leases> {
  const nc = await connect({ servers: cluster.natsUrls, maxReconnectAttempts: -1 })
  const kv = await new Kvm(nc).create(LEASE_BUCKET, { replicas: 3, history: 1 })
  // Hosts that hold leases write them within a lease period of starting.
  await new Promise((r) => setTimeout(r, cluster.leaseMs))
  // Shard leases only: the authorization service's lease (AUTH_LEASE_KEY) lives in the same bucket.
  const keys = await kv.keys('shard.>')
  let existing = 0
  for await (const _ of keys) existing++
  const standIn = existing === 0
  let owner: Host | undefined
  let epoch = 1
  const renew = async (): Promise<void> => {
    if (owner === undefined) return
    const value: LeaseValue = { node: owner.nodeId, url: owner.url, epoch }
    for (let s = 0; s < shards; s++) await kv.put(shardLeaseKey(s), JSON.stringify(value))
  }
  const timer = setInterval(() => void renew().catch(() => undefined), Math.floor(cluster.leaseMs / 3))
  return {
    nc, kv, standIn,
    ownAll(host) {
      owner = host
      epoch++
      void renew()
    },
    async ownerOf(tenant) {
      const deadline = Date.now() + 20_000
      for (;;) {
        const entry = await kv.get(shardLeaseKey(shardOf(tenant, shards)))
        const node = entry?.operation === 'PUT' ? (entry.json<LeaseValue>()).node : undefined
        const host = cluster.hosts.find((h) => h.nodeId === node)
        if (host !== undefined) return host
        if (Date.now() > deadline) throw new Error(`no host owns the shard of ${tenant}`)
        await new Promise((r) => setTimeout(r, 200))
      }
    },
    async stop() {
      clearInterval(timer)
      await nc.close()
    },
  }
}

/** A test file's cluster, its skip reason, and its lease view (opened by the first test that asks; closed at teardown). */
export function clusterFile(tap: Parameters<typeof clusterForFile>[0], options: ClusterOptions = {}): { skip: string | false; cluster: Cluster; leases: () => Promise<Leases> } {
  const skip = clusterSkip()
  const cluster = clusterForFile(tap, skip, options)
  let opened: Promise<Leases> | undefined
  tap.teardown(async () => { await (await opened)?.stop() })
  return { skip, cluster, leases: () => (opened ??= leasesFor(cluster)) }
}

/** Skips the failover scenario (returning false) while the hosts hold no leases of their own: nothing could take over. */
export function hostsHoldLeases(t: { skip(name: string, fn: () => Promise<void>): unknown }, leases: Leases, why = 'nothing could take over'): boolean {
  if (!leases.standIn) return true
  t.skip(`the hosts hold no leases of their own (replication not built on this branch): ${why}`, async () => undefined)
  return false
}

/** The owner of the tenant's shard and another host, each with its Graph of tenant demo. */
export async function ownerAndOther(cluster: Cluster, leases: Leases, graphs: readonly Graph[], tenant = 'demo'): Promise<{ owner: Host; other: Host; viaOwner: Graph; viaOther: Graph }> {
  const owner = await leases.ownerOf(tenant)
  const other = cluster.hosts.find((h) => h !== owner)!
  return { owner, other, viaOwner: graphs[cluster.hosts.indexOf(owner)]!, viaOther: graphs[cluster.hosts.indexOf(other)]! }
}
