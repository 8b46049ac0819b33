// Disk format migrations of a shard (src/shards/manifest.ts lists the
// formats). Each step runs in one write transaction and is idempotent, so a
// crash during a migration is finished by the next start. They run where a
// start opens its shards (workers/actor/open-shards.ts), and only there.
import type { Database, RootDatabase } from 'lmdb'
import { LEGACY_NEXT_SLOT_KEY, NEXT_SLOT_KEY, nodeOfKey, ownedKey, type Key } from './keys'
import type { ShardValues } from './schema'

export interface MigratedStore {
  readonly env: RootDatabase
  readonly keySlots: Database<ShardValues['keySlots'], Key>
  readonly nodes: Database<ShardValues['nodes'], Key>
  readonly owned: Database<ShardValues['owned'], Key>
}

/**
 * Builds before NEXT_SLOT_KEY kept the counter under ['nextSlot'], which is
 * also where a tenant named "nextSlot" keeps its slot: moved by the migration from format 1.
 */
export function migrateSlotCounter(store: MigratedStore): void {
  const legacy = store.keySlots.get(LEGACY_NEXT_SLOT_KEY)
  if (legacy === undefined || store.keySlots.get(NEXT_SLOT_KEY) !== undefined) return
  store.env.transactionSync(() => {
    store.keySlots.putSync(NEXT_SLOT_KEY, legacy)
    store.keySlots.removeSync(LEGACY_NEXT_SLOT_KEY)
  })
}

/** Format 3: the owner index (ownedKey) built from the nodes, so a revocation can find what it must clean up. */
export function buildOwnerIndex(store: MigratedStore): void {
  store.env.transactionSync(() => {
    for (const { key, value } of store.nodes.getRange()) {
      const { tenant, node } = nodeOfKey(key)
      store.owned.putSync(ownedKey(tenant, value.o, node), 1)
    }
  })
}

const STEPS: Record<number, (store: MigratedStore) => void> = {
  // 1 -> 2: the key-slot counter moves from ['nextSlot'] to ['@nextSlot'] (keys.ts).
  1: migrateSlotCounter,
  // 2 -> 3: the owner index.
  2: buildOwnerIndex,
}

export function migrateShard(store: MigratedStore, from: number, to: number): void {
  for (let v = from; v < to; v++) STEPS[v]?.(store)
}
