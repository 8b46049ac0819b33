// A master-key rotation of one shard (src/commands/rotate-master-key.ts runs it on a
// copy of a stopped server's data directory, never in place): the search
// index rebuilt under the new master key's blind-index keys, the webhook
// secrets sealed again, then every data key wrapped again. The data keys
// themselves, and so every sealed value, stay. Which properties are indexed
// is read from the index itself (no metamodel needed): each indexed property
// of each node that still opens gets its term under the new key; entries of
// data that no longer opens are dropped (they could find nothing).
import { deriveKey } from '../../src/crypto/master-key'
import { own } from '../../src/model/own-key'
import { BlindIndex } from '../crypto/blind-index'
import { indexedPropertyOf, indexKey, nodeKey, nodeOfKey, NEXT_SLOT_KEY } from './keys'
import { openElement } from './sealing'
import { indexable } from './search-index'
import type { ShardStore } from './shard-store'
import { resealWebhookSecrets, webhookDb } from './webhooks'

/** tenant/ns/type (as JSON) -> the properties the index holds terms of. */
function indexedProperties(store: ShardStore): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>()
  for (const raw of store.index.getKeys()) {
    const { tenant, ns, type, property } = indexedPropertyOf(raw)
    const at = JSON.stringify([tenant, ns, type])
    const set = out.get(at) ?? new Set<string>()
    set.add(property)
    out.set(at, set)
  }
  return out
}

/** `store` was opened with the old master key. */
export function rekeyShard(store: ShardStore, oldKey: Buffer, newKey: Buffer): { slots: number; nodes: number } {
  const blind = new BlindIndex(newKey)
  let nodes = 0
  // Opened before the transaction writes.
  webhookDb(store)
  store.env.transactionSync(() => {
    const indexed = indexedProperties(store)
    store.index.clearSync()
    for (const { key, value } of store.nodes.getRange()) {
      const { tenant, node } = nodeOfKey(key)
      const { ns, type, id } = node
      const properties = indexed.get(JSON.stringify([tenant, ns, type]))
      if (properties === undefined) continue
      const opened = openElement(store, tenant, nodeKey(tenant, node), value, false, false)
      if (opened.kind !== 'open') continue
      const props = JSON.parse(opened.record.p) as Record<string, unknown>
      for (const property of properties) {
        const v = own(props, property)
        if (indexable(v)) store.index.putSync(indexKey(tenant, ns, type, property, blind.term(tenant, property, v), id), 1)
      }
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
