// Opening an actor's shards at start: files checked before LMDB sees them,
// older disk formats migrated, a restored backup's shred log applied, key
// file checked against what the shard recorded, and revocations a crash
// interrupted finished; without cluster mode, the shard's journal replayed
// first. Damage throws ShardDamage before anything is served.
import type { ActorConfig } from '../../src/contract/messages'
import type { WrappingKeys } from '../../src/crypto/kek-file'
import { Urls } from '../../src/contract/urls'
import { shreddedSlots } from '../../src/crypto/shred-log'
import { Metamodel } from '../../src/model/metamodel'
import { BlindIndex } from '../crypto/blind-index'
import { finishRevocations } from '../store/consents'
import { verifyKeys } from '../store/key-check'
import { migrateShard } from '../store/migrate-shard'
import { verifyShardFiles } from '../store/shard-files'
import { restoreCheckpoint } from '../store/lmdb-checkpoint'
import { closeShard, openShard, shardPath, type ShardStore } from '../store/shard-store'
import { applyShredLog, shredKeys } from '../store/shred-keys'
import { replayJournal, type Journaled } from './local-journal'

/** A restored backup: the keys its installation destroyed after the backup are destroyed here too, before the key check. */
function applyRestore(config: ActorConfig, masterKey: Buffer, store: ShardStore): void {
  if (config.restore?.generation === undefined) return
  const slots = shreddedSlots(config.shredLog, config.restore.generation, store.shard)
  if (slots.size === 0) return
  const sc = {
    store, urls: new Urls(config.publicUrl), metamodel: new Metamodel(config.metamodel), blind: new BlindIndex(masterKey),
    now: Date.now(), touched: new Set<string>(), schedulesChanged: false, shred: [],
  }
  const { revoked, destroyed } = applyShredLog(sc, slots)
  console.error(`shard ${store.shard}: restored backup: the shred log revoked ${revoked} consent(s) and destroyed ${destroyed} key(s)`)
}

function openVerified(config: ActorConfig, masterKey: Buffer, wrapping: Buffer | WrappingKeys, shard: number, journals: Map<ShardStore, Journaled> | undefined): ShardStore {
  // What followed the last checkpoint may be torn by a power loss: the checks see the checkpoint (store/lmdb-checkpoint.ts).
  restoreCheckpoint(shardPath(config.dataDir, shard))
  verifyShardFiles(shardPath(config.dataDir, shard), shard, config.existing)
  const store = openShard(config.dataDir, shard, wrapping, config.eventRetentionCount, false, journals !== undefined)
  try {
    migrateShard(store, config.formatOnDisk, config.formatVersion)
    // What the journal holds beyond LMDB goes in before anything reads the shard (revocations it replays are finished below).
    if (journals !== undefined) journals.set(store, replayJournal(store, config.dataDir))
    applyRestore(config, masterKey, store)
    verifyKeys(store)
    const finished = finishRevocations(store, (slots) => shredKeys(store, { path: config.shredLog, generation: config.generation }, slots))
    if (finished > 0) console.error(`shard ${shard}: finished ${finished} revocation(s) a crash had interrupted`)
    return store
  } catch (err) {
    void closeShard(store)
    throw err
  }
}

/**
 * `wrapping`: what wraps the data keys (the master key; in cluster mode the KEKs of --kek-file).
 * `journals`: without cluster mode, each shard's local journal, replayed, is set there.
 */
export function openShards(config: ActorConfig, masterKey: Buffer, wrapping: Buffer | WrappingKeys = masterKey, journals?: Map<ShardStore, Journaled>): Map<number, ShardStore> {
  const stores = new Map<number, ShardStore>()
  try {
    for (const shard of config.shards) stores.set(shard, openVerified(config, masterKey, wrapping, shard, journals))
    return stores
  } catch (err) {
    for (const store of stores.values()) void closeShard(store)
    throw err
  }
}
