// Disk format migrations of a shard (src/shards/manifest.ts lists the
// formats). Each step runs in one write transaction and is idempotent, so a
// crash during a migration is finished by the next start. They run where a
// start opens its shards (workers/actor/open-shards.ts), and only there.
import type { Database, RootDatabase } from 'lmdb'
import { LEGACY_NEXT_SLOT_KEY, NEXT_SLOT_KEY, consentOf, nodeOfKey, ownedKey, ownedRelationKey, relationOfKey, subjectConsentKey, type Key } from './keys'
import type { ShardValues } from './schema'

export interface MigratedStore {
  readonly env: RootDatabase
  readonly keySlots: Database<ShardValues['keySlots'], Key>
  readonly nodes: Database<ShardValues['nodes'], Key>
  readonly owned: Database<ShardValues['owned'], Key>
  readonly relations: Database<ShardValues['relations'], Key>
  readonly consents: Database<ShardValues['consents'], Key>
  readonly subjects: Database<ShardValues['subjects'], Key>
  readonly ownedRelations: Database<ShardValues['ownedRelations'], Key>
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

/**
 * Format 6: each subject's consents (subjectConsentKey) and each owner's
 * relations (ownedRelationKey), so a subject's list, export and erase read
 * only what is theirs. Older consents keep no client and no change time.
 */
export function buildSubjectIndexes(store: MigratedStore): void {
  store.env.transactionSync(() => {
    for (const { key, value } of store.consents.getRange()) {
      const { tenant, ref } = consentOf(key)
      store.subjects.putSync(subjectConsentKey(tenant, value.subject, ref), 1)
    }
    for (const { key, value } of store.relations.getRange()) {
      const { tenant, relation } = relationOfKey(key)
      store.ownedRelations.putSync(ownedRelationKey(tenant, value.o, relation), 1)
    }
  })
}

const STEPS: Record<number, (store: MigratedStore) => void> = {
  // 1 -> 2: the key-slot counter moves from ['nextSlot'] to ['@nextSlot'] (keys.ts).
  1: migrateSlotCounter,
  // 2 -> 3: the owner index.
  2: buildOwnerIndex,
  // 5 -> 6: the subject and relation-owner indexes.
  5: buildSubjectIndexes,
}

export function migrateShard(store: MigratedStore, from: number, to: number): void {
  for (let v = from; v < to; v++) STEPS[v]?.(store)
}
