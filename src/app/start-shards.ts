// The shard actors, started, and in cluster mode the front's NATS side and
// the authorization service's lease.
import type { Bootstrap } from '../bootstrap/bootstrap-file'
import type { ClusterAuth } from '../cluster/auth-front'
import type { ClusterFront } from '../cluster/start'
import { hostUrlOf } from '../config/cluster-options'
import type { Config } from '../config/load-config'
import { ActorPool } from '../shards/actor-pool'
import type { AuthParts } from '../start/auth-parts'
import type { OpenedDataDir } from '../start/data-dir'

export interface RunningShards {
  pool: ActorPool
  /** Cluster mode only. */
  cluster: ClusterFront | undefined
  /** Cluster mode only. */
  authCluster: ClusterAuth | undefined
}

/** Resolves once every actor has opened its shards (and in cluster mode, the cluster's parts are up). */
export async function startShards(config: Config, boot: Bootstrap, opened: OpenedDataDir, publicUrl: string, auth: AuthParts): Promise<RunningShards> {
  const { manifest, created, masterKey } = opened
  // Cluster mode only: a dynamic import, so that one machine loads nothing of NATS.
  const clusterStart = config.cluster === undefined ? undefined : await import('../cluster/start')
  const clusterConnection = config.cluster === undefined ? undefined : await clusterStart!.connectClusterFront(config.cluster)
  const pool = new ActorPool({
    dataDir: config.dataDir, shardCount: manifest.shards, workerCount: config.workers, actorHeapMb: config.actorHeapMb, publicUrl, metamodel: boot.metamodel, masterKey,
    eventRetentionMs: config.eventRetentionMs, eventRetentionCount: config.eventRetentionCount,
    existing: !created, formatOnDisk: opened.formatOnDisk,
    shredLog: config.shredLog, generation: manifest.generation ?? '', restore: opened.restore,
    cluster: config.cluster, traces: config.traces,
  })
  await pool.started()
  const cluster = config.cluster === undefined ? undefined : await clusterStart!.startClusterFront(config.cluster, clusterConnection!, pool, manifest.shards)
  const authCluster = config.cluster === undefined ? undefined : await (await import('../cluster/auth-front')).startClusterAuth({ options: config.cluster, store: auth.authStore, tokens: auth.tokens, dataDir: config.dataDir, hostUrl: hostUrlOf(config.cluster, publicUrl), prepare: auth.prepare, prepared: auth.prepared })
  return { pool, cluster, authCluster }
}
