// Opening an actor's shards at start: files checked before LMDB sees them,
// older disk formats migrated, key file checked against what the shard
// recorded, and revocations a crash interrupted finished. Damage throws
// ShardDamage before anything is served.
import type { ActorConfig } from '../../src/contract/messages'
import { finishRevocations } from '../store/consents'
import { verifyKeys } from '../store/key-check'
import { migrateShard } from '../store/migrate-shard'
import { verifyShardFiles } from '../store/shard-files'
import { closeShard, openShard, shardPath, type ShardStore } from '../store/shard-store'

function openVerified(config: ActorConfig, masterKey: Buffer, shard: number): ShardStore {
  verifyShardFiles(shardPath(config.dataDir, shard), shard, config.existing)
  const store = openShard(config.dataDir, shard, masterKey, config.eventRetentionCount)
  try {
    migrateShard(store, config.formatOnDisk, config.formatVersion)
    verifyKeys(store)
    const finished = finishRevocations(store)
    if (finished > 0) console.error(`shard ${shard}: finished ${finished} revocation(s) a crash had interrupted`)
    return store
  } catch (err) {
    void closeShard(store)
    throw err
  }
}

export function openShards(config: ActorConfig, masterKey: Buffer): Map<number, ShardStore> {
  const stores = new Map<number, ShardStore>()
  try {
    for (const shard of config.shards) stores.set(shard, openVerified(config, masterKey, shard))
    return stores
  } catch (err) {
    for (const store of stores.values()) void closeShard(store)
    throw err
  }
}
