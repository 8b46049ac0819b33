// The chaos bench's faults, one per scenario: each picks its victim, injects
// the fault, measures how long until every live host serves every shard
// again, and brings the victim back while the write load goes on.
import type { KV } from '@nats-io/kv'
import type { Target, Statuses } from './chaos-load'
import { readsServed, recoveryMs, tokensServed } from './chaos-probe'
import { onCleanup } from './cleanup'
import { authOwner, shardOwners, type ClusterHosts } from './cluster-hosts'
import type { LocalNats } from './nats-local'
import { sleep } from './wait'

/** What a scenario works on; `live` is the nodes the load and the probes use. */
export interface ChaosCluster {
  nats: LocalNats
  hosts: ClusterHosts
  kv: KV
  leaseMs: number
  targets: readonly Target[]
  live: Set<string>
  origin(node: string): string
}

export interface FaultResult {
  /** What was hit (a node id or a nats-server name). */
  victim: string
  /** Ms from the fault until every live host served every shard (undefined: not within the give-up time). */
  recoveryMs: number | undefined
  /** Other times of the run (ms), by name. */
  extra: Record<string, number | undefined>
  /** Token requests' answers, where the scenario sends them. */
  tokenStatuses?: Statuses
  /** Brings the victim back (placement is the caller's to wait for). */
  restore(): Promise<void>
}

export interface ChaosScenario {
  name: string
  /** The recovery goal for this lease period. */
  goalMs(leaseMs: number): number
  /** A product host comes back: the restore phase must answer no 503 and placement settle in time (chaos-goals.ts). */
  rejoins: boolean
  fault(c: ChaosCluster): Promise<FaultResult>
}

/** The goal of the issue: two lease periods and 2 s. */
const recoveryGoal = (leaseMs: number): number => 2 * leaseMs + 2000
/** NATS 2.9's own stream leader elections, not configurable, on top where a NATS server died. */
const NATS_ELECTION_MS = 9000
/** How long a probe keeps going past the goal before it says "not recovered". */
const GIVE_UP_AFTER_GOAL_MS = 60_000

/** Ms from `since` until `served()` holds and still does `goalMs` after `since` (so a late effect of the fault counts). */
const untilServed = (since: number, served: () => Promise<boolean>, goalMs: number): Promise<number | undefined> =>
  recoveryMs(since, served, goalMs + GIVE_UP_AFTER_GOAL_MS, goalMs)

const origins = (c: ChaosCluster, nodes: Iterable<string> = c.live): string[] => [...nodes].map((n) => c.origin(n))

/** The node owning the most shards now (the bucket asked again while it does not answer). */
async function busiestOwner(kv: KV): Promise<string> {
  for (let tries = 0; ; tries++) {
    const counts = new Map<string, number>()
    for (const node of await shardOwners(kv)) if (node !== undefined) counts.set(node, (counts.get(node) ?? 0) + 1)
    const [best] = [...counts].sort((a, b) => b[1] - a[1])
    if (best !== undefined) return best[0]
    if (tries > 50) throw new Error('no shard has an owner')
    await sleep(200)
  }
}

/** Takes `node` out of the live set, then kills it (kill -9). */
async function killHost(c: ChaosCluster, node: string): Promise<number> {
  c.live.delete(node)
  const at = Date.now()
  await c.hosts.hosts[c.hosts.nodes.indexOf(node)]!.kill()
  return at
}

/** Starts a killed host again. */
function restartHost(c: ChaosCluster, node: string): () => Promise<void> {
  return async () => {
    await c.hosts.restart(node)
    c.live.add(node)
  }
}

const killOwner: ChaosScenario = {
  name: 'kill-owner',
  goalMs: recoveryGoal,
  rejoins: true,
  async fault(c) {
    const victim = await busiestOwner(c.kv)
    const at = await killHost(c, victim)
    const ms = await untilServed(at, () => readsServed(origins(c), c.targets), recoveryGoal(c.leaseMs))
    return { victim, recoveryMs: ms, extra: {}, restore: restartHost(c, victim) }
  },
}

const pauseOwner: ChaosScenario = {
  name: 'pause-owner',
  goalMs: recoveryGoal,
  rejoins: false,
  async fault(c) {
    const victim = await busiestOwner(c.kv)
    const proc = c.hosts.hosts[c.hosts.nodes.indexOf(victim)]!.proc
    // However the run ends, a stopped host must be able to act on the cleanup's SIGTERM.
    const forget = onCleanup(() => { proc.kill('SIGCONT') })
    const survivors = origins(c, [...c.live].filter((n) => n !== victim))
    c.live.delete(victim)
    const at = Date.now()
    proc.kill('SIGSTOP')
    const [ms, resumed] = await Promise.all([
      untilServed(at, () => readsServed(survivors, c.targets), recoveryGoal(c.leaseMs)),
      (async () => {
        await sleep(2 * c.leaseMs + 1000)
        proc.kill('SIGCONT')
        forget()
        const contAt = Date.now()
        c.live.add(victim)
        return untilServed(contAt, () => readsServed(origins(c), c.targets), recoveryGoal(c.leaseMs))
      })(),
    ])
    return { victim, recoveryMs: ms, extra: { afterSigcontMs: resumed }, restore: async () => undefined }
  },
}

const killMetaLeader: ChaosScenario = {
  name: 'kill-meta-leader',
  goalMs: (leaseMs) => recoveryGoal(leaseMs) + NATS_ELECTION_MS,
  rejoins: false,
  async fault(c) {
    const victim = await c.nats.metaLeader()
    if (victim === undefined) throw new Error('no nats-server names a JetStream meta leader')
    const at = Date.now()
    await c.nats.kill(victim)
    const ms = await untilServed(at, () => readsServed(origins(c), c.targets), killMetaLeader.goalMs(c.leaseMs))
    return {
      victim, recoveryMs: ms, extra: {},
      restore: () => c.nats.restart(victim),
    }
  },
}

const wipeHost: ChaosScenario = {
  name: 'wipe-host',
  goalMs: recoveryGoal,
  rejoins: true,
  async fault(c) {
    const victim = await busiestOwner(c.kv)
    c.live.delete(victim)
    const at = Date.now()
    let listeningAt: number | undefined
    // Killed, its data directory deleted and started again; it counts as live once it listens.
    const restarted = c.hosts.restart(victim, { wipe: true }).then(() => {
      listeningAt = Date.now()
      c.live.add(victim)
    })
    const [ms] = await Promise.all([
      untilServed(at, async () => listeningAt !== undefined && readsServed(origins(c), c.targets), recoveryGoal(c.leaseMs)),
      restarted,
    ])
    return {
      victim, recoveryMs: ms,
      extra: { listeningMs: listeningAt === undefined ? undefined : listeningAt - at, afterListeningMs: ms === undefined || listeningAt === undefined ? undefined : ms - (listeningAt - at) },
      restore: async () => undefined,
    }
  },
}

const killAuthOwner: ChaosScenario = {
  name: 'kill-auth-owner',
  goalMs: recoveryGoal,
  rejoins: true,
  async fault(c) {
    const victim = await authOwner(c.kv)
    if (victim === undefined) throw new Error('nobody holds the auth lease')
    const at = await killHost(c, victim)
    const tokenStatuses: Statuses = {}
    const [ms, tokensMs] = await Promise.all([
      untilServed(at, () => readsServed(origins(c), c.targets), recoveryGoal(c.leaseMs)),
      untilServed(at, () => tokensServed(origins(c), c.targets[0]!, tokenStatuses), recoveryGoal(c.leaseMs)),
    ])
    return { victim, recoveryMs: ms, extra: { tokensMs }, tokenStatuses, restore: restartHost(c, victim) }
  },
}

export const CHAOS_SCENARIOS: readonly ChaosScenario[] = [killOwner, pauseOwner, killMetaLeader, wipeHost, killAuthOwner]
