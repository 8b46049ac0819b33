// Start-up check of a shard's key file against what its environment records:
// every slot handed out exists, and every granted consent and every tenant
// key opens under the master key. A deleted or truncated keys.bin would
// otherwise lock all customer data of the shard without a word.
import { statSync } from 'node:fs'
import { SLOT_BYTES } from '../crypto/key-file'
import { consentOf, NEXT_SLOT_KEY, tenantOfSlotKey } from './keys'
import { ShardDamage } from './shard-files'
import type { ShardStore } from './shard-store'

export function verifyKeys(store: ShardStore): void {
  const where = `shard ${store.shard} (${store.keyFile.path})`
  const restore = 'restore keys.bin from the backup taken with this data.mdb; without it the data sealed under the lost keys cannot be read'
  const slots = store.keySlots.get(NEXT_SLOT_KEY) ?? 0
  const size = statSync(store.keyFile.path).size
  if (size < slots * SLOT_BYTES) {
    throw new ShardDamage(`${where}: keys.bin is missing or truncated: it holds ${Math.floor(size / SLOT_BYTES)} of the ${slots} key slots recorded; ${restore}`)
  }
  for (const { key, value } of store.consents.getRange()) {
    if (value.status === 'granted' && !store.keys.opens(value.slot)) {
      const { tenant, ref } = consentOf(key)
      throw new ShardDamage(`${where}: the key of granted consent ${ref} of tenant ${tenant} (slot ${value.slot}) is destroyed or does not open with this master key (in cluster mode: the KEKs of --kek-file); ${restore}`)
    }
  }
  for (const { key, value } of store.keySlots.getRange()) {
    const tenant = tenantOfSlotKey(key)
    if (tenant === undefined) continue
    if (!store.keys.opens(value)) {
      throw new ShardDamage(`${where}: the key of tenant ${tenant} (slot ${value}) is destroyed or does not open with this master key (in cluster mode: the KEKs of --kek-file); ${restore}`)
    }
  }
}
