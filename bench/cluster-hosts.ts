// Two product hosts in cluster mode on this machine's loopback
// (bench/cluster.ts): one master key, KEK and bootstrap, a data directory
// and shred log each, host1 first so that it holds the pinned auth lease,
// then host2; ready once every shard's lease names its preferred host.
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { AUTH_LEASE_KEY, shardLeaseKey } from '../src/contract/cluster-names'
import type { ClusterDurability } from '../src/config/cluster-options'
import { loadOrCreateMasterKey } from '../src/crypto/master-key'
import { leaseBucket } from '../src/replication/lease-bucket'
import { parseLease } from '../src/replication/lease-map'
import { preferredHost } from '../src/replication/placement'
import { startChild, type Child } from './child'
import { freePort } from './free-port'
import { SERVER_ENTRY, type ServiceLayout } from './service'
import { sleep } from './wait'

export const SHARDS = 4
const NODES = ['host1', 'host2'] as const

export interface ClusterHosts {
  hosts: Child[]
  /** The node id holding each shard's lease once placed. */
  owners: string[]
  stop(): Promise<void>
}


/** Starts host1 and host2 sharing `layout`'s bootstrap and master key; each keeps its data under `tmp/<node>`. */
export async function startClusterHosts(tmp: string, layout: ServiceLayout, natsUrls: readonly string[], workers: number, durability: ClusterDurability = 'local'): Promise<ClusterHosts> {
  // The hosts must share the master key and the KEK: made here, before either starts.
  loadOrCreateMasterKey(layout.masterKey)
  const kek = join(tmp, 'kek.key')
  loadOrCreateMasterKey(kek)
  const nc = await connect({ servers: [...natsUrls], maxReconnectAttempts: -1 })
  const hosts: Child[] = []
  try {
    const kv = await leaseBucket(nc, natsUrls.length)
    for (const node of NODES) {
      const port = await freePort()
      const url = `http://127.0.0.1:${port}`
      hosts.push(await startChild(node, SERVER_ENTRY, [
        '--host', '127.0.0.1', '--port', String(port), '--public-url', url,
        '--data-dir', join(tmp, node, 'data'), '--shred-log', join(tmp, node, 'shred.log'),
        '--bootstrap', layout.bootstrap, '--master-key-file', layout.masterKey, '--kek-file', kek,
        '--workers', String(workers), '--nats-url', natsUrls.join(','), '--node-id', node,
        '--cluster-durability', durability,
      ], { keepOutputChars: 1 << 20, startTimeoutMs: 120_000 }))
      if (node === 'host1') {
        const by = Date.now() + 30_000
        while (parseLease((await kv.get(AUTH_LEASE_KEY))?.string() ?? '')?.node !== 'host1') {
          if (Date.now() > by) throw new Error('host1 did not take the auth lease within 30 s')
          await sleep(200)
        }
      }
    }
    const wanted = Array.from({ length: SHARDS }, (_, s) => preferredHost(s, [...NODES])!)
    const by = Date.now() + 90_000
    for (;;) {
      const owners = await Promise.all(wanted.map(async (_, s) => {
        const e = await kv.get(shardLeaseKey(s))
        return e?.operation === 'PUT' ? parseLease(e.string())?.node : undefined
      }))
      if (JSON.stringify(owners) === JSON.stringify(wanted)) break
      if (Date.now() > by) throw new Error(`the shards were not placed within 90 s: ${JSON.stringify(owners)} (expected ${JSON.stringify(wanted)})`)
      await sleep(250)
    }
    return { hosts, owners: wanted, stop: async () => { await Promise.all(hosts.map((h) => h.stop())) } }
  } catch (err) {
    await Promise.all(hosts.map((h) => h.stop()))
    throw err
  } finally {
    await nc.close()
  }
}
