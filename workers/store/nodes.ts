// Node reads and writes of one shard. Writes run inside the shard's write
// transaction (see workers/shard-actor.ts), so each is all-or-nothing and
// sees the writes applied before it. Properties are sealed per owner
// (workers/store/sealing.ts).
import type { Database } from 'lmdb'
import type { Metamodel } from '../../src/model/metamodel'
import type { NodeRef, RelationRef, WriteContext } from '../../src/contract/messages'
import type { ShardContext } from './context'
import { IN, OUT, adjacencyKey, adjacencyPrefix, nodeKey, ownedKey, ownedNodeOf, ownedPrefix, ownedRelationKey, prefixRange, relationKey, relationOfAdjacency, typePrefix, type Key } from './keys'
import { LOCKED_PLACEHOLDER, nodeObject, type ElementRecord } from './records'
import { NO_CONTENT, fail, ok, type OpError, type OpResult } from './result'
import { elementId, meta, openElement, revokedPropertyWritten, sealElement, writeGrant } from './sealing'
import { keepAnswer, keptAnswer, observedWrites } from './kept-reads'
import { reindex } from './search-index'
import { appendEvent } from './events'
import { addToCount } from './deferred-writes'
import { recordTimings } from './timings'
import type { ElementMeta, StoredElement } from './schema'
import type { ShardStore } from './shard-store'

/** A change event (spec 6) in the current transaction. */
export function changeEvent(sc: ShardContext, tenant: string, operation: 'CREATE' | 'DELETE', schema: string, payload: Record<string, unknown>, trace: string | undefined): void {
  appendEvent(sc.store, tenant, operation, schema, payload, trace, sc.now)
  sc.touched.add(tenant)
}

const describe = (n: NodeRef): string => `node ${n.ns}/${n.type}/${n.id}`

/** The payload of a relation's change event (spec 6). */
export function relationPayload(consentRefId: string, r: RelationRef): Record<string, unknown> {
  return { consentRefId, fromId: r.from.id, toId: r.to.id, relationshipId: r.rel.id }
}

export const consentRevoked = (what: string): OpResult => fail('consent_revoked', `consent to ${what} is revoked`)

export function nodeOwnedBy(metamodel: Metamodel, tenant: string, n: NodeRef): 'customer' | 'tenant' {
  return metamodel.nodeType(tenant, n.ns, n.type)?.owner ?? 'customer'
}

/**
 * The read of one node or relation (spec 1.8): 404 when missing, consent
 * revoked when its owner's consent is, the locked placeholder when it cannot
 * be opened, else `render` of what it holds.
 */
export function readElement(
  store: ShardStore, db: Database<StoredElement, Key>, tenant: string, key: Key, what: string, render: (r: ElementRecord) => string,
): OpResult {
  // The answer as last read, while nothing was written to the shard since (kept-reads.ts says why that is enough).
  const id = elementId(key)
  const observed = observedWrites(store.shard)
  const kept = keptAnswer(store.shard, id)
  if (kept !== undefined) return ok(200, kept, undefined, observed)
  const stored = db.get(key)
  if (stored === undefined) return fail('element_not_found', `${what} not found`)
  const opened = openElement(store, tenant, key, stored, true, true, id)
  if (opened.kind === 'revoked') return consentRevoked(what)
  if (opened.kind === 'locked') return ok(200, LOCKED_PLACEHOLDER)
  const answer = render(opened.record)
  return ok(200, answer, undefined, keepAnswer(store.shard, id, answer, observed) ? observed : undefined)
}

export function getNode({ store, urls }: ShardContext, tenant: string, n: NodeRef): OpResult {
  return readElement(store, store.nodes, tenant, nodeKey(tenant, n), describe(n), (r) => nodeObject(urls, tenant, n, r))
}

export function getNodeProperty({ store }: ShardContext, tenant: string, n: NodeRef, name: string): OpResult {
  const key = nodeKey(tenant, n)
  const stored = store.nodes.get(key)
  if (stored === undefined) return fail('element_not_found', `${describe(n)} not found`)
  const opened = openElement(store, tenant, key, stored, true)
  if (opened.kind === 'revoked') return consentRevoked(describe(n))
  if (opened.kind === 'locked') return consentRevoked(`the data of ${describe(n)} (it was sealed under a key that no longer exists)`)
  if (opened.hidden.includes(name)) return consentRevoked(`property "${name}" of ${describe(n)}`)
  const props = JSON.parse(opened.record.p) as Record<string, unknown>
  if (!Object.prototype.hasOwnProperty.call(props, name)) {
    return fail('element_not_found', `${describe(n)} has no property "${name}"`)
  }
  return ok(200, JSON.stringify(props[name]))
}

export function countNodes({ store }: ShardContext, tenant: string, ns: string, type: string): OpResult {
  return ok(200, undefined, store.counts.get(typePrefix(tenant, ns, type)) ?? 0)
}

/** A node that exists after ensureNode: its identity and timestamps. */
export interface EnsuredNode {
  kind: 'node'
  meta: ElementMeta
}

/**
 * Creates the node with no properties when it is missing (the end nodes of a
 * relation PUT or counter POST); an existing node is left as it is.
 */
export function ensureNode(sc: ShardContext, tenant: string, n: NodeRef, ctx: WriteContext): EnsuredNode | OpError {
  const { store, metamodel, now } = sc
  const key = nodeKey(tenant, n)
  const existing = store.nodes.get(key)
  if (existing !== undefined) return { kind: 'node', meta: meta(existing) }
  const grant = writeGrant(store, tenant, ctx.consent, nodeOwnedBy(metamodel, tenant, n), undefined, describe(n))
  if (grant.kind === 'error') return grant
  const created = { c: now, b: ctx.client, o: grant.owner, p: '{}' }
  store.nodes.putSync(key, sealElement(store, key, grant.slot, created))
  store.owned.putSync(ownedKey(tenant, grant.owner, n), 1)
  addToCount(store, typePrefix(tenant, n.ns, n.type), 1)
  changeEvent(sc, tenant, 'CREATE', sc.urls.nodeSchema(tenant, n.ns, n.type), { id: n.id, consentRefId: ctx.consent }, ctx.trace)
  return { kind: 'node', meta: meta(created) }
}

/** Spec 1.5: create, or append/overwrite just the named properties. */
export function putNode(sc: ShardContext, tenant: string, n: NodeRef, props: Record<string, unknown>, ctx: WriteContext, property?: string): OpResult {
  const { store, metamodel, blind, now } = sc
  const key = nodeKey(tenant, n)
  const existing = store.nodes.get(key)
  const grant = writeGrant(store, tenant, ctx.consent, nodeOwnedBy(metamodel, tenant, n), existing?.o, describe(n))
  if (grant.kind === 'error') return grant
  const refused = revokedPropertyWritten(grant, props)
  if (refused !== undefined) return refused
  let before: Record<string, unknown> = {}
  if (existing === undefined) {
    addToCount(store, typePrefix(tenant, n.ns, n.type), 1)
    changeEvent(sc, tenant, 'CREATE', sc.urls.nodeSchema(tenant, n.ns, n.type), { id: n.id, consentRefId: ctx.consent }, ctx.trace)
  } else {
    // A locked element (sealed under a destroyed key) starts afresh (docs/design/contracts.md).
    const opened = openElement(store, tenant, key, existing, false, false)
    if (opened.kind === 'open') before = JSON.parse(opened.record.p) as Record<string, unknown>
  }
  const after = { ...before, ...props }
  reindex(store, metamodel, blind, tenant, n, before, after)
  const record = { c: existing?.c ?? now, b: existing?.b ?? ctx.client, o: grant.owner, p: JSON.stringify(after) }
  store.nodes.putSync(key, sealElement(store, key, grant.slot, record))
  if (existing?.o !== grant.owner) {
    if (existing !== undefined) store.owned.removeSync(ownedKey(tenant, existing.o, n))
    store.owned.putSync(ownedKey(tenant, grant.owner, n), 1)
  }
  recordTimings(sc, tenant, { kind: 'node', node: n, property }, grant.owner, ctx)
  if (ctx.schedule !== undefined || ctx.decay !== undefined) sc.touched.add(tenant)
  return NO_CONTENT
}

export function putNodeProperty(sc: ShardContext, tenant: string, n: NodeRef, name: string, value: unknown, ctx: WriteContext): OpResult {
  return putNode(sc, tenant, n, { [name]: value }, ctx, name)
}

/** Idempotent; removes the node's relations in both directions and their far adjacency entries. */
export function deleteNode(sc: ShardContext, tenant: string, n: NodeRef, trace: string | undefined): OpResult {
  const { store, metamodel, blind, urls } = sc
  const key = nodeKey(tenant, n)
  const existing = store.nodes.get(key)
  if (existing === undefined) return NO_CONTENT
  const prefix = adjacencyPrefix(tenant, n)
  // Collected first: deleting under a live cursor of the same transaction is unsafe.
  const adjacent = [...store.adjacency.getKeys(prefixRange(prefix))]
  for (const adj of adjacent) {
    const { neighbour, relation, direction } = relationOfAdjacency(adj)
    const rk = relationKey(tenant, relation)
    const stored = store.relations.get(rk)
    // A self-relation is listed twice in the node's own list; it is removed (and announced) once.
    if (stored === undefined) continue
    store.relations.removeSync(rk)
    store.ownedRelations.removeSync(ownedRelationKey(tenant, stored.o, relation))
    changeEvent(sc, tenant, 'DELETE', urls.relationSchema(tenant, relation), relationPayload(stored.o, relation), trace)
    store.adjacency.removeSync(adjacencyKey(tenant, neighbour, n, direction === OUT ? IN : OUT, relation.rel))
    store.adjacency.removeSync(adj)
  }
  const opened = openElement(store, tenant, key, existing, false, false)
  if (opened.kind === 'open') reindex(store, metamodel, blind, tenant, n, JSON.parse(opened.record.p) as Record<string, unknown>, {})
  store.nodes.removeSync(key)
  store.owned.removeSync(ownedKey(tenant, existing.o, n))
  addToCount(store, typePrefix(tenant, n.ns, n.type), -1)
  changeEvent(sc, tenant, 'DELETE', urls.nodeSchema(tenant, n.ns, n.type), { id: n.id, consentRefId: existing.o }, trace)
  return NO_CONTENT
}

/**
 * Before a consent is revoked (its key still opens its data): removes the
 * search-index entries of every node it owns, so no blind term of the
 * shredded values is left to test guesses against.
 */
export function forgetSearchTerms(sc: ShardContext, tenant: string, ref: string): void {
  const { store, metamodel, blind } = sc
  // Collected first: writing under a live cursor of the same transaction is unsafe.
  const owned = [...store.owned.getKeys(prefixRange(ownedPrefix(tenant, ref)))].map(ownedNodeOf)
  for (const n of owned) {
    const key = nodeKey(tenant, n)
    const stored = store.nodes.get(key)
    if (stored === undefined) continue
    const opened = openElement(store, tenant, key, stored, false, false)
    if (opened.kind === 'open') reindex(store, metamodel, blind, tenant, n, JSON.parse(opened.record.p) as Record<string, unknown>, {})
  }
}
