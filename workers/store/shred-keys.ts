// Destroying data keys so that a restored backup cannot bring them back: each
// slot is written to the shred log (synced) before it is zeroed, and a start
// on a restored backup applies the log before anything opens
// (src/crypto/shred-log.ts, docs/design/data-protection.md).
import { appendShredLog } from '../../src/crypto/shred-log'
import { consentOf } from './keys'
import { forgetSearchTerms } from './nodes'
import type { ShardContext } from './context'
import { forgetUncommitted, type ShardStore } from './shard-store'

/** Keys destroyed per shard since the actor's last stats report (workers/actor/stats.ts); a restore's re-application of the log is not counted. */
export const destroyedSinceReport = new Map<number, number>()

/** Where this installation logs destroyed keys, and the generation it writes on each line. */
export interface ShredTarget { path: string; generation: string }

/** Logged first, then zeroed: a slot zeroed but not logged would open again in a backup taken before. */
export function shredKeys(store: ShardStore, target: ShredTarget, slots: readonly number[]): void {
  appendShredLog(target.path, target.generation, store.shard, slots)
  for (const slot of slots) store.keys.destroy(slot)
  destroyedSinceReport.set(store.shard, (destroyedSinceReport.get(store.shard) ?? 0) + slots.length)
}

/**
 * A restored backup: the consents whose slots the log names are marked
 * revoked (their search terms removed while the key still opens) and the
 * slots zeroed, so record and slot agree before the key check and before
 * anything is served. Idempotent: a crash here leaves the manifest marked
 * restored-copy, and the next start applies the log again.
 */
export function applyShredLog(sc: ShardContext, slots: ReadonlySet<number>): { revoked: number; destroyed: number } {
  const { store } = sc
  let revoked = 0
  store.env.transactionSync(() => {
    const hits = [...store.consents.getRange()].filter(({ value }) => value.status === 'granted' && slots.has(value.slot))
    for (const { key, value } of hits) {
      const { tenant, ref } = consentOf(key)
      forgetSearchTerms(sc, tenant, ref)
      store.consents.putSync(key, { ...value, status: 'revoked' })
      revoked++
    }
  })
  // The caches were filled while the consents still said granted.
  forgetUncommitted(store)
  let destroyed = 0
  for (const slot of slots) {
    if (store.keyFile.read(slot) === undefined) continue
    store.keys.destroy(slot)
    destroyed++
  }
  return { revoked, destroyed }
}
