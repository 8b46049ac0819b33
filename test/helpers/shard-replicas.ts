// Shard 0's replicas on one local nats-server, for the in-process replication
// tests: each made with its own data directory and host (1 s lease, local
// durability); everything closed and removed at the test's teardown.
import { randomBytes } from 'node:crypto'
import { ABORT } from 'lmdb'
import { connect } from '@nats-io/transport-node'
import type { NatsConnection } from '@nats-io/nats-core'
import type { KV } from '@nats-io/kv'
import { leaseBucket } from '../../src/replication/lease-bucket'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import { Recorder } from '../../workers/actor/replication/recorder'
import { ShardLog } from '../../workers/actor/replication/shard-log'
import { ShardReplica, type ReplicaHost } from '../../workers/actor/replication/shard-replica'
import { startNatsServer } from './nats-server'
import { removeDir, tempDir } from './server'

export const REPLICA_LEASE_MS = 1000

export interface ShardReplicas {
  nc: NatsConnection
  kv: KV
  /** A started replica of shard 0 for `node` (its host's fields as given, else the defaults). */
  replicaOf(node: string, host?: Partial<ReplicaHost>): Promise<{ store: ShardStore; replica: ShardReplica }>
}

export async function shardReplicas(t: { teardown(fn: () => Promise<void>): void }): Promise<ShardReplicas> {
  const server = await startNatsServer()
  const nc = await connect({ servers: server.url })
  const kv = await leaseBucket(nc, 1)
  const masterKey = randomBytes(32)
  const made: { store: ShardStore; dir: string; replica: ShardReplica }[] = []
  t.teardown(async () => {
    for (const m of made) {
      await m.replica.close().catch(() => undefined)
      await closeShard(m.store)
      removeDir(m.dir)
    }
    await nc.close()
    await server.stop()
  })
  return {
    nc, kv,
    async replicaOf(node, host = {}) {
      const dir = tempDir('replica-')
      const store = openShard(dir, 0, masterKey)
      const replica = new ShardReplica(store, await ShardLog.open(nc, 0, 1, 2000), new Recorder(store, ABORT), {
        kv, nodeId: node, url: `http://${node}`, leaseMs: REPLICA_LEASE_MS, durability: 'local', now: () => performance.now(),
        ownership: () => undefined, destroyKeys: () => undefined, warn: () => undefined, info: () => undefined,
        ...host,
      })
      await replica.start()
      made.push({ store, dir, replica })
      return { store, replica }
    },
  }
}
