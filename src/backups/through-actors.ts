// The running server's shards, each copied by its own actor while it serves.
import type { ActorPool } from '../shards/actor-pool'

export function backupShardsThroughActors(pool: ActorPool, shardCount: number): (to: string) => Promise<void> {
  return (to) => new Promise((resolve, reject) => {
    let left = shardCount
    const failures: string[] = []
    pool.callEveryShard({ op: 'backupShard', dataDir: to }, (shard, reply) => {
      if (reply.kind === 'error') failures.push(`shard ${shard}: ${reply.message}`)
      if (--left > 0) return
      if (failures.length === 0) resolve()
      else reject(new Error(`the backup failed: ${failures.join('; ')}`))
    })
  })
}
