// A master-key rotation of one shard (src/rotate-master-key.ts runs it on a
// copy of a stopped server's data directory, never in place): the search
// index rebuilt under the new master key's blind-index keys (from every node
// that still opens), the webhook secrets sealed again, then every data key
// wrapped again. The data keys themselves, and so every sealed value, stay.
import type { Metamodel } from '../../src/model/metamodel'
import { deriveKey } from '../../src/crypto/master-key'
import { BlindIndex } from '../crypto/blind-index'
import { keyParts, NEXT_SLOT_KEY } from './keys'
import { openElement } from './sealing'
import { reindex } from './search-index'
import type { ShardStore } from './shard-store'
import { resealWebhookSecrets, webhookDb } from './webhooks'

/** `store` was opened with the old master key. */
export function rekeyShard(store: ShardStore, metamodel: Metamodel, oldKey: Buffer, newKey: Buffer): { slots: number; nodes: number } {
  const blind = new BlindIndex(newKey)
  let nodes = 0
  // Opened before the transaction writes.
  webhookDb(store)
  store.env.transactionSync(() => {
    store.index.clearSync()
    for (const { key, value } of store.nodes.getRange()) {
      const [tenant, ns, type, id] = keyParts(key) as [string, string, string, string]
      const opened = openElement(store, tenant, keyParts(key), value, false, false)
      if (opened.kind !== 'open') continue
      reindex(store, metamodel, blind, tenant, { ns, type, id }, {}, JSON.parse(opened.record.p) as Record<string, unknown>)
      nodes++
    }
    resealWebhookSecrets(store, deriveKey(oldKey, 'webhook secrets'), deriveKey(newKey, 'webhook secrets'))
  })
  const handedOut = store.keySlots.get(NEXT_SLOT_KEY) ?? 0
  let slots = 0
  for (let slot = 0; slot < handedOut; slot++) {
    if (store.keyFile.read(slot) === undefined) continue
    store.keys.rewrap(slot, newKey)
    slots++
  }
  return { slots, nodes }
}
