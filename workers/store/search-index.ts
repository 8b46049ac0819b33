// The index behind `q`: one entry per (searchable property, value, node).
// Terms are a hash of property and canonical JSON value, so the index holds
// no plaintext and keys stay short whatever the value's length.
import { createHash } from 'node:crypto'
import type { Metamodel } from '../../src/model/metamodel'
import type { NodeRef } from '../../src/shard/messages'
import { indexKey } from './keys'
import type { ShardStore } from './shard-store'

export function indexTerm(property: string, value: string | number | boolean): string {
  return createHash('sha256').update(property).update('\0').update(JSON.stringify(value)).digest('base64url')
}

function indexable(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))
}

/** Moves the index entries of a node from its old to its new properties (inside a write transaction). */
export function reindex(
  store: ShardStore, metamodel: Metamodel, tenant: string, n: NodeRef,
  before: Record<string, unknown>, after: Record<string, unknown>,
): void {
  for (const property of metamodel.searchable(tenant, n.ns, n.type)) {
    const old = before[property]
    const cur = after[property]
    if (old === cur) continue
    if (indexable(old)) store.index.removeSync(indexKey(tenant, n.ns, n.type, property, indexTerm(property, old), n.id))
    if (indexable(cur)) store.index.putSync(indexKey(tenant, n.ns, n.type, property, indexTerm(property, cur), n.id), 1)
  }
}
