// Three JetStream nats-servers (Debian's 2.9.10), each in its own network
// namespace, routed to each other as one cluster; store dirs in temp dirs.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { createNamespace, inNamespace, type Namespace } from './netns'
import { startProcess, type Started } from './processes'
import { sleep } from '../../../bench/wait'

export const NATS_SERVER = '/usr/sbin/nats-server'
const CLIENT_PORT = 4222
const ROUTE_PORT = 6222
const MONITOR_PORT = 8222

export interface NatsServer extends Started {
  name: string
  ns: Namespace
  url: string
  monitorUrl: string
  storeDir: string
}

export interface NatsOptions {
  /** Per-server JetStream file store limit (the full-stream scenario sets it low). */
  maxFileStore?: string
}

/** The config file of server `i` of `addresses`. */
function natsConfig(name: string, address: string, peers: readonly string[], storeDir: string, options: NatsOptions): string {
  return [
    `server_name: ${name}`,
    `listen: "${address}:${CLIENT_PORT}"`,
    `http: "${address}:${MONITOR_PORT}"`,
    // A forwarded write carries its body (up to --max-body, 1 MiB by default) plus the call around it.
    'max_payload: 8MB',
    `jetstream { store_dir: "${storeDir}"${options.maxFileStore === undefined ? '' : `, max_file_store: ${options.maxFileStore}`} }`,
    `cluster { name: pgc, listen: "${address}:${ROUTE_PORT}", routes: [${peers.map((p) => `"nats://${p}:${ROUTE_PORT}"`).join(', ')}] }`,
    '',
  ].join('\n')
}

/** Starts server `index` (1-based) of three in namespace nats<index> at .1<index>; `dir` holds its config and store. */
export async function startNatsServer(index: number, dir: string, options: NatsOptions = {}, existing?: Namespace): Promise<NatsServer> {
  const name = `nats${index}`
  const ns = existing ?? createNamespace(name, 10 + index)
  const peers = [1, 2, 3].filter((i) => i !== index).map((i) => ns.address.replace(/\.\d+$/, `.${10 + i}`))
  const storeDir = join(dir, name)
  const configFile = join(dir, `${name}.conf`)
  writeFileSync(configFile, natsConfig(name, ns.address, peers, storeDir, options))
  const started = await startProcess(name, [...inNamespace(ns), NATS_SERVER, '-c', configFile], /Server is ready/)
  return { ...started, name, ns, url: `nats://${ns.address}:${CLIENT_PORT}`, monitorUrl: `http://${ns.address}:${MONITOR_PORT}`, storeDir }
}

interface Jsz {
  meta_cluster?: { leader?: string; cluster_size?: number; replicas?: { name: string; current: boolean }[] }
}

/** The JetStream meta group as `server` sees it (its /jsz monitoring page). */
export async function metaCluster(server: NatsServer): Promise<Jsz['meta_cluster']> {
  const res = await request(`${server.monitorUrl}/jsz`, { headersTimeout: 2000, bodyTimeout: 2000 })
  return ((await res.body.json()) as Jsz).meta_cluster
}

/** Waits until every running server sees the same meta leader with all peers current. */
export async function waitForJetStreamCluster(servers: readonly NatsServer[], timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs
  let last = ''
  while (Date.now() < deadline) {
    try {
      const metas = await Promise.all(servers.map(metaCluster))
      const leaders = new Set(metas.map((m) => m?.leader ?? ''))
      // Only the leader lists the other peers; it must see them all current.
      const current = metas.some((m) => (m?.replicas ?? []).filter((r) => r.current).length === servers.length - 1)
      last = JSON.stringify(metas)
      if (leaders.size === 1 && !leaders.has('') && current) return [...leaders][0]!
    } catch (err) {
      last = (err as Error).message
    }
    await sleep(250)
  }
  throw new Error(`the NATS servers formed no JetStream cluster within ${timeoutMs} ms: ${last}`)
}

interface JszStreams {
  account_details?: { stream_detail?: { name: string; cluster?: { leader?: string; replicas?: { name: string; current: boolean }[] } }[] }[]
}

/**
 * Waits until every stream's leader sees all its replicas current: a server
 * restarted after a kill has caught up, so another server's death is again a
 * single fault (a stream with one current replica of three has no quorum).
 */
export async function waitForStreamsCurrent(servers: readonly NatsServer[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let behind: string[] = []
  while (Date.now() < deadline) {
    behind = []
    let led = 0
    for (const server of servers) {
      try {
        const res = await request(`${server.monitorUrl}/jsz?accounts=true&streams=true`, { headersTimeout: 2000, bodyTimeout: 2000 })
        const jsz = (await res.body.json()) as JszStreams
        for (const stream of (jsz.account_details ?? []).flatMap((a) => a.stream_detail ?? [])) {
          if (stream.cluster?.leader !== server.name) continue
          led++
          for (const r of stream.cluster.replicas ?? []) if (!r.current) behind.push(`${stream.name}@${r.name}`)
        }
      } catch (err) {
        behind.push(`${server.name}: ${(err as Error).message}`)
      }
    }
    if (led > 0 && behind.length === 0) return
    await sleep(250)
  }
  throw new Error(`stream replicas not current within ${timeoutMs} ms: ${behind.slice(0, 10).join(', ')}`)
}

/** The server leading the most streams (as `server` sees the cluster), with its count. */
export async function busiestStreamLeader(server: NatsServer): Promise<{ name: string; streams: number } | undefined> {
  const res = await request(`${server.monitorUrl}/jsz?accounts=true&streams=true`, { headersTimeout: 2000, bodyTimeout: 2000 })
  const jsz = (await res.body.json()) as JszStreams
  const counts = new Map<string, number>()
  for (const account of jsz.account_details ?? []) {
    for (const stream of account.stream_detail ?? []) {
      const leader = stream.cluster?.leader
      if (leader !== undefined) counts.set(leader, (counts.get(leader) ?? 0) + 1)
    }
  }
  const [best] = [...counts].sort((a, b) => b[1] - a[1])
  return best === undefined ? undefined : { name: best[0], streams: best[1] }
}
