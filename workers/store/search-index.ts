// The index behind `q`: one entry per (searchable property, blind term, node).
// Terms are keyed hashes (workers/crypto/blind-index.ts), so the index holds
// no plaintext. Entries of data that can no longer be decrypted cannot be
// removed by value; reads check every hit against the opened properties.
import type { Metamodel } from '../../src/model/metamodel'
import { own } from '../../src/model/own-key'
import type { NodeRef } from '../../src/contract/messages'
import type { BlindIndex } from '../crypto/blind-index'
import { indexKey } from './keys'
import type { ShardStore } from './shard-store'

export function indexable(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
}

/** Moves the index entries of a node from its old to its new properties (inside a write transaction). */
export function reindex(
  store: ShardStore, metamodel: Metamodel, blind: BlindIndex, tenant: string, n: NodeRef,
  before: Record<string, unknown>, after: Record<string, unknown>,
): void {
  for (const property of metamodel.searchable(tenant, n.ns, n.type)) {
    const old = own(before, property)
    const cur = own(after, property)
    if (old === cur) continue
    if (indexable(old)) store.index.removeSync(indexKey(tenant, n.ns, n.type, property, blind.term(tenant, property, old), n.id))
    if (indexable(cur)) store.index.putSync(indexKey(tenant, n.ns, n.type, property, blind.term(tenant, property, cur), n.id), 1)
  }
}
