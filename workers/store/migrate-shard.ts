// Disk format migrations of a shard (src/shard/manifest.ts lists the
// formats). Each step runs in one write transaction and is idempotent, so a
// crash during a migration is finished by the next start.
import type { ShardStore } from './shard-store'
import { migrateSlotCounter } from './consents'

const STEPS: Record<number, (store: ShardStore) => void> = {
  // 1 -> 2: the key-slot counter moves from ['nextSlot'] to ['@nextSlot'] (keys.ts).
  1: migrateSlotCounter,
}

export function migrateShard(store: ShardStore, from: number, to: number): void {
  for (let v = from; v < to; v++) STEPS[v]?.(store)
}
