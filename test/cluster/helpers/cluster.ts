// The whole test cluster: a bridge, three JetStream nats-servers and two or
// three product hosts, each in its own network namespace, sharing one master
// key file, one KEK file and one bootstrap. One cluster per test file; the
// teardown stops everything and removes the network and the temp dirs.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { loadOrCreateMasterKey } from '../../../src/crypto/master-key'
import { startChild } from '../../../bench/child'
import { ENTRY, FIXTURE_BOOTSTRAP, removeDir, tempDir } from '../../helpers/server'
import { controls, type Started } from './processes'
import { createBridge, createNamespace, cutOff, inNamespace, namespacesUnavailable, reconnect, removeNetwork, type Namespace } from './netns'
import { NATS_SERVER, startNatsServer, waitForJetStreamCluster, type NatsOptions, type NatsServer } from './nats-cluster'
import { sleep } from '../../../bench/wait'

const HOST_PORT = 8080

/** Why the cluster tests cannot run here (a skip message), or false. */
export function clusterSkip(): string | false {
  if (!existsSync(NATS_SERVER)) return `cluster tests need ${NATS_SERVER} (apt-get install nats-server)`
  if (!existsSync(ENTRY)) return `cluster tests need the build (${ENTRY}): npm run build`
  return namespacesUnavailable() ?? false
}

export interface ClusterOptions extends NatsOptions {
  /** Product hosts, 2 or 3. */
  hosts?: number
  leaseMs?: number
  /** Extra server arguments for every host. */
  args?: string[]
  /** The bootstrap file every host is given (default: the fixture's). */
  bootstrap?: string
  /** One public URL for every host (each then gets --cluster-url with its own address); default: each host's address. */
  publicUrl?: string
}

export interface Host extends Started {
  nodeId: string
  ns: Namespace
  url: string
  dataDir: string
  /** Starts it again on its data directory (after kill or stop). */
  restart(): Promise<void>
}

export interface Cluster {
  dir: string
  nats: NatsServer[]
  hosts: Host[]
  leaseMs: number
  /** NATS URLs as the hosts are given them. */
  natsUrls: string[]
  /** Cuts a host off every NATS server (its HTTP port stays reachable). */
  cutOff(host: Host): void
  reconnect(host: Host): void
  /** Starts a killed NATS server again on its store. */
  restartNats(server: NatsServer): Promise<NatsServer>
}

/**
 * Seen once in a full run: a host in a namespace made a moment before could
 * not bind its address yet ("cannot listen"). A second try a second later is
 * the harness's business, not the product's.
 */
async function startChildRetried(nodeId: string, args: string[], ns: Namespace): ReturnType<typeof startChild> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startChild(nodeId, ENTRY, args, { wrapper: inNamespace(ns), startTimeoutMs: 60_000, keepOutputChars: 4_000_000 })
    } catch (err) {
      if (attempt >= 3 || !/cannot listen/.test((err as Error).message)) throw err
      await sleep(1000)
    }
  }
}

async function startHost(index: number, ns: Namespace, cluster: Omit<Cluster, 'hosts'>, options: ClusterOptions): Promise<Omit<Host, 'restart'>> {
  const nodeId = `host${index}`
  const dataDir = join(cluster.dir, nodeId)
  const url = `http://${ns.address}:${HOST_PORT}`
  const args = [
    '--host', ns.address, '--port', String(HOST_PORT),
    ...(options.publicUrl === undefined ? ['--public-url', url] : ['--public-url', options.publicUrl, '--cluster-url', url]),
    '--data-dir', join(dataDir, 'data'), '--bootstrap', options.bootstrap ?? FIXTURE_BOOTSTRAP, '--workers', '2',
    '--master-key-file', join(cluster.dir, 'secrets', 'master.key'), '--shred-log', join(dataDir, 'shred.log'),
    '--kek-file', join(cluster.dir, 'secrets', 'kek.key'),
    '--nats-url', cluster.natsUrls.join(','), '--node-id', nodeId, '--lease-ms', String(cluster.leaseMs),
    ...(options.args ?? []),
  ]
  const child = await startChildRetried(nodeId, args, ns)
  return { pid: child.pid, proc: child.proc, output: child.output, ...controls(child.proc), nodeId, ns, url, dataDir }
}

/** Makes the cluster before the file's first test and removes it at teardown; fields are set once started. */
export function clusterForFile(tap: { before(fn: () => Promise<void>): void; teardown(fn: () => Promise<void>): void }, skip: string | false, options: ClusterOptions = {}): Cluster {
  const cluster = { nats: [], hosts: [] } as unknown as Cluster
  if (skip !== false) return cluster
  tap.before(async () => {
    removeNetwork()
    createBridge()
    const dir = tempDir('pgc-cluster-')
    // Every host shares the master key and the KEK (both 32 random bytes, mode 0600).
    loadOrCreateMasterKey(join(dir, 'secrets', 'master.key'))
    loadOrCreateMasterKey(join(dir, 'secrets', 'kek.key'))
    const opts = { maxFileStore: options.maxFileStore }
    const nats = await Promise.all([1, 2, 3].map((i) => startNatsServer(i, dir, opts)))
    await waitForJetStreamCluster(nats)
    Object.assign(cluster, {
      dir, nats, leaseMs: options.leaseMs ?? 3000, natsUrls: nats.map((n) => n.url),
      cutOff: (host: Host) => cutOff(host.ns, cluster.nats.map((n) => n.ns)),
      reconnect: (host: Host) => reconnect(host.ns, cluster.nats.map((n) => n.ns)),
      async restartNats(server: NatsServer) {
        const again = await startNatsServer(Number(server.name.slice(4)), dir, opts, server.ns)
        cluster.nats[cluster.nats.indexOf(server)] = again
        return again
      },
    })
    const count = options.hosts ?? 2
    for (let i = 1; i <= count; i++) {
      const ns = createNamespace(`host${i}`, 20 + i)
      const host = { ...(await startHost(i, ns, cluster, options)) } as Host
      host.restart = async () => { Object.assign(host, await startHost(i, ns, cluster, options)) }
      cluster.hosts.push(host)
    }
  })
  tap.teardown(async () => {
    await Promise.all(cluster.hosts.map((h) => h.stop()))
    await Promise.all(cluster.nats.map((n) => n.stop()))
    removeNetwork()
    if (cluster.dir !== undefined) removeDir(cluster.dir)
  })
  return cluster
}
