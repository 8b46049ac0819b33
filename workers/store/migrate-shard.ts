// Disk format migrations of a shard (src/shard/manifest.ts lists the
// formats). Each step runs in one write transaction and is idempotent, so a
// crash during a migration is finished by the next start.
import type { ShardStore } from './shard-store'
import { NEXT_SLOT } from './consents'

const STEPS: Record<number, (store: ShardStore) => void> = {
  // 1 -> 2: the key-slot counter moves from ['nextSlot'] to [0].
  1: (store) => {
    const old = store.keySlots.get(['nextSlot'])
    if (old === undefined) return
    store.keySlots.putSync(NEXT_SLOT, Math.max(old, store.keySlots.get(NEXT_SLOT) ?? 0))
    store.keySlots.removeSync(['nextSlot'])
  },
}

export function migrateShard(store: ShardStore, from: number, to: number): void {
  for (let v = from; v < to; v++) {
    const step = STEPS[v]
    if (step !== undefined) store.env.transactionSync(() => step(store))
  }
}
