// Cluster mode's front side, started by main.ts only when --nats-url is given
// (a dynamic import: on one machine no NATS module loads): the front thread's
// own NATS connection, the lease watch, forwarding both ways, and the
// readiness check and metrics of a cluster host.
import { connect } from '@nats-io/transport-node'
import { ConfigError } from '../config/load-config'
import type { ClusterOptions } from '../config/cluster-options'
import { log } from '../telemetry/log'
import { clusterOwnedShards } from '../telemetry/metrics'
import type { ActorPool } from '../shards/actor-pool'
import { Forwarding, type OwnedLocally } from './forwarding'
import { LeaseMap } from '../replication/lease-map'
import { watchLeases } from './lease-watch'
import { OK } from '../operations/health'
import { EVENTS_SUBJECT } from '../contract/cluster-names'
import type { NatsConnection } from '@nats-io/nats-core'

/**
 * Long-polls, WebSocket streams and webhook wake-ups wait on the pool's event
 * notifications, which only the owner's actors raise: the owner's front
 * announces them to every host, whose waiters then read through forwarding.
 */
function announceEvents(nc: NatsConnection, pool: ActorPool): () => void {
  const stop = pool.onEvents((tenant, last) => {
    if (pool.servesHere(tenant)) nc.publish(EVENTS_SUBJECT, JSON.stringify({ tenant, last }))
  })
  nc.subscribe(EVENTS_SUBJECT, {
    callback: (err, msg) => {
      if (err !== null) return
      const { tenant, last } = msg.json<{ tenant: string; last: number }>()
      if (!pool.servesHere(tenant)) pool.eventsAppended(tenant, last)
    },
  })
  return stop
}

export interface ClusterFront {
  /** The readiness check: ok while connected to NATS, else what is wrong. */
  check(): string
  /** Called with the shards this host gained (their webhooks' delivery restarts from the store). */
  onGained(listener: (shards: ReadonlySet<number>) => void): void
  close(): Promise<void>
}

/** Whether this host serves a shard: its actors' word (they hold the lease and have caught up: workers/actor/replication). */
const ownership = (pool: ActorPool): OwnedLocally => (shard) => pool.ownedLocally(shard)

/**
 * The front's NATS connection. Made before the actors start (src/main.ts), so
 * that no NATS server to reach is the one-line start error, not also the
 * actors' own failed connections.
 */
export function connectClusterFront(options: ClusterOptions): Promise<NatsConnection> {
  return connect({
    servers: options.servers, name: `front ${options.nodeId}`,
    // Reconnect forever, and notice a silent partition within about a lease period.
    maxReconnectAttempts: -1, reconnectTimeWait: 500, pingInterval: Math.max(1000, Math.floor(options.leaseMs / 2)), maxPingOut: 2,
  }).catch((err: unknown) => {
    // At start, no server of the list answering is the operator's to fix: one line, exit 1 (a supervisor retries).
    throw new ConfigError(`cannot reach NATS at ${options.servers.join(', ')}: ${(err as Error).message}`)
  })
}

export async function startClusterFront(options: ClusterOptions, nc: NatsConnection, pool: ActorPool, shardCount: number): Promise<ClusterFront> {
  let connected = true
  let stopping = false
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'staleConnection') connected = false
      else if (s.type === 'reconnect') connected = true
      if (s.type === 'disconnect' || s.type === 'reconnect') log.warn(`cluster: NATS ${s.type} (${s.server})`)
    }
  })()
  const leases = new LeaseMap(options.leaseMs)
  const ownedLocally = ownership(pool)
  // Twice the lease period: an owner that dies mid-call is replaced within one, and its successor may need the other to catch up.
  const forwarding = new Forwarding({ nc, pool, leases, nodeId: options.nodeId, ownedLocally, timeoutMs: 2 * options.leaseMs })
  forwarding.serve()
  pool.remote = forwarding
  void watchLeases(nc, leases, shardCount, () => stopping)
  const stopAnnouncing = announceEvents(nc, pool)
  // A silent partition shows only as round trips that do not come back: the last one that did dates our contact with NATS.
  let lastContact = performance.now()
  const contact = setInterval(() => void nc.flush().then(() => { lastContact = performance.now() }, () => undefined), Math.max(250, Math.floor(options.leaseMs / 4)))
  contact.unref()
  const gained = new Set<(shards: ReadonlySet<number>) => void>()
  // Told at once, in the actor's ownership message, before anything else can act on it: webhook delivery
  // starts on a shard only from there (a later, polled notice dropped hooks that had begun delivering).
  const served = new Set<number>()
  for (let s = 0; s < shardCount; s++) if (ownedLocally(s)) served.add(s)
  const stopOwnership = pool.onOwnership((shard, owned) => {
    if (!owned) {
      served.delete(shard)
      return
    }
    if (served.has(shard)) return
    served.add(shard)
    for (const listener of gained) listener(new Set([shard]))
  })
  const gauge = setInterval(() => {
    let owned = 0
    for (let s = 0; s < shardCount; s++) if (ownedLocally(s)) owned++
    clusterOwnedShards.set(owned)
  }, 1000)
  gauge.unref()
  log.info(`cluster: ${options.nodeId} connected to NATS (${options.servers.join(', ')}); lease period ${options.leaseMs} ms`)
  return {
    onGained: (listener) => { gained.add(listener) },
    check: () => {
      if (!connected || nc.isClosed()) return `not connected to NATS (${options.servers.join(', ')})`
      const silent = performance.now() - lastContact
      return silent < options.leaseMs ? OK : `no answer from NATS for ${Math.round(silent)} ms (${options.servers.join(', ')})`
    },
    async close() {
      stopping = true
      clearInterval(gauge)
      stopOwnership()
      clearInterval(contact)
      stopAnnouncing()
      pool.remote = undefined
      await forwarding.close()
      await nc.drain().catch(() => undefined)
    },
  }
}
