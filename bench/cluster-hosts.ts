// Product hosts in cluster mode on this machine's loopback (bench/cluster.ts
// two, bench/chaos.ts three): one master key, KEK and bootstrap, a data
// directory and shred log each, host1 first so that it holds the pinned auth
// lease, then the others; ready once every shard's lease names its preferred
// host. A host can be started again on its data directory, or on an empty
// one (the chaos bench's faults).
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import type { KV } from '@nats-io/kv'
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

export interface ClusterHostOptions {
  durability?: ClusterDurability
  /** How many hosts (host1..hostN; default 2). */
  count?: number
  /** The hosts' --lease-ms (default: the server's). */
  leaseMs?: number
}

export interface ClusterHosts {
  /** The running child of each node, in `nodes` order (replaced by restart()). */
  hosts: Child[]
  nodes: readonly string[]
  /** The node id holding each shard's lease once placed. */
  owners: string[]
  /** Starts a host again on its data directory (after a kill); `wipe` deletes that directory first. */
  restart(node: string, options?: { wipe?: boolean }): Promise<void>
  stop(): Promise<void>
}

/** The node each shard's lease names now (undefined: none, or the bucket did not answer). */
export async function shardOwners(kv: KV): Promise<(string | undefined)[]> {
  return Promise.all(Array.from({ length: SHARDS }, async (_, s) => {
    const e = await kv.get(shardLeaseKey(s)).catch(() => null)
    return e?.operation === 'PUT' ? parseLease(e.string())?.node : undefined
  }))
}

/** The node holding the auth lease now (undefined: none, or the bucket did not answer). */
export async function authOwner(kv: KV): Promise<string | undefined> {
  const e = await kv.get(AUTH_LEASE_KEY).catch(() => null)
  return e?.operation === 'PUT' ? parseLease(e.string())?.node : undefined
}

/** Each shard's preferred host among `nodes` (src/replication/placement.ts). */
export const preferredOwners = (nodes: readonly string[]): string[] => Array.from({ length: SHARDS }, (_, s) => preferredHost(s, nodes)!)

/** Does every shard's lease name its preferred host among `nodes` now? */
export async function isPlaced(kv: KV, nodes: readonly string[]): Promise<boolean> {
  return JSON.stringify(await shardOwners(kv)) === JSON.stringify(preferredOwners(nodes))
}

/** Waits until every shard's lease names its preferred host among `nodes`; returns those owners. */
export async function waitForPlacement(kv: KV, nodes: readonly string[], timeoutMs = 90_000): Promise<string[]> {
  const wanted = preferredOwners(nodes)
  const by = Date.now() + timeoutMs
  for (;;) {
    const owners = await shardOwners(kv)
    if (JSON.stringify(owners) === JSON.stringify(wanted)) return wanted
    if (Date.now() > by) throw new Error(`the shards were not placed within ${timeoutMs} ms: ${JSON.stringify(owners)} (expected ${JSON.stringify(wanted)})`)
    await sleep(250)
  }
}

/** Starts host1..hostN sharing `layout`'s bootstrap and master key; each keeps its data under `tmp/<node>`. */
export async function startClusterHosts(tmp: string, layout: ServiceLayout, natsUrls: readonly string[], workers: number, options: ClusterHostOptions = {}): Promise<ClusterHosts> {
  // The hosts must share the master key and the KEK: made here, before any starts.
  loadOrCreateMasterKey(layout.masterKey)
  const kek = join(tmp, 'kek.key')
  loadOrCreateMasterKey(kek)
  const nodes = Array.from({ length: options.count ?? 2 }, (_, i) => `host${i + 1}`)
  const dataDir = (node: string): string => join(tmp, node, 'data')
  // A host keeps its port across restarts, so that the others' view of its URL stays right.
  const ports = await Promise.all(nodes.map(() => freePort()))
  const start = (node: string): Promise<Child> => {
    const url = `http://127.0.0.1:${ports[nodes.indexOf(node)]!}`
    return startChild(node, SERVER_ENTRY, [
      '--host', '127.0.0.1', '--port', String(ports[nodes.indexOf(node)]!), '--public-url', url,
      '--data-dir', dataDir(node), '--shred-log', join(tmp, node, 'shred.log'),
      '--bootstrap', layout.bootstrap, '--master-key-file', layout.masterKey, '--kek-file', kek,
      '--workers', String(workers), '--nats-url', natsUrls.join(','), '--node-id', node,
      '--cluster-durability', options.durability ?? 'local',
      ...(options.leaseMs === undefined ? [] : ['--lease-ms', String(options.leaseMs)]),
    ], { keepOutputChars: 1 << 20, startTimeoutMs: 120_000 })
  }
  const nc = await connect({ servers: [...natsUrls], maxReconnectAttempts: -1 })
  const hosts: Child[] = []
  try {
    const kv = await leaseBucket(nc, natsUrls.length)
    for (const node of nodes) {
      hosts.push(await start(node))
      if (node === 'host1') {
        const by = Date.now() + 30_000
        while ((await authOwner(kv)) !== 'host1') {
          if (Date.now() > by) throw new Error('host1 did not take the auth lease within 30 s')
          await sleep(200)
        }
      }
    }
    const owners = await waitForPlacement(kv, nodes)
    return {
      hosts, nodes, owners,
      async restart(node, restartOptions = {}) {
        const i = nodes.indexOf(node)
        await hosts[i]!.kill()
        if (restartOptions.wipe === true) rmSync(dataDir(node), { recursive: true, force: true })
        hosts[i] = await start(node)
      },
      stop: async () => { await Promise.all(hosts.map((h) => h.stop())) },
    }
  } catch (err) {
    await Promise.all(hosts.map((h) => h.stop()))
    throw err
  } finally {
    await nc.close()
  }
}
