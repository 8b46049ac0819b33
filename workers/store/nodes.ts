// Node reads and writes of one shard. Writes run inside the shard's write
// transaction (see workers/shard-actor.ts), so each is all-or-nothing and
// sees the writes applied before it.
import type { Metamodel } from '../../src/model/metamodel'
import type { Urls } from '../../src/model/urls'
import type { NodeRef, WriteContext } from '../../src/shard/messages'
import { END, IN, OUT, adjacencyKey, adjacencyPrefix, nodeKey, relationKey, relationOfAdjacency, typePrefix, type Key } from './keys'
import { nodeObject, type ElementRecord } from './records'
import { NO_CONTENT, fail, ok, type OpResult } from './result'
import { reindex } from './search-index'
import type { ShardStore } from './shard-store'

export interface ShardContext {
  store: ShardStore
  urls: Urls
  metamodel: Metamodel
  now: number
}

export function getNode({ store, urls }: ShardContext, tenant: string, n: NodeRef): OpResult {
  const r = store.nodes.get(nodeKey(tenant, n))
  if (r === undefined) return fail('element_not_found', `node ${n.ns}/${n.type}/${n.id} not found`)
  return ok(200, nodeObject(urls, tenant, n, r))
}

export function getNodeProperty({ store }: ShardContext, tenant: string, n: NodeRef, key: string): OpResult {
  const r = store.nodes.get(nodeKey(tenant, n))
  if (r === undefined) return fail('element_not_found', `node ${n.ns}/${n.type}/${n.id} not found`)
  const props = JSON.parse(r.p) as Record<string, unknown>
  if (!Object.prototype.hasOwnProperty.call(props, key)) {
    return fail('element_not_found', `node ${n.ns}/${n.type}/${n.id} has no property "${key}"`)
  }
  return ok(200, JSON.stringify(props[key]))
}

export function countNodes({ store }: ShardContext, tenant: string, ns: string, type: string): OpResult {
  return ok(200, undefined, store.counts.get(typePrefix(tenant, ns, type)) ?? 0)
}

function bumpCount(store: ShardStore, key: Key, delta: number): void {
  const next = (store.counts.get(key) ?? 0) + delta
  if (next === 0) store.counts.removeSync(key)
  else store.counts.putSync(key, next)
}

/** Creates the node with no properties when it is missing; returns its record. */
export function ensureNode({ store, now }: ShardContext, tenant: string, n: NodeRef, ctx: WriteContext): ElementRecord {
  const key = nodeKey(tenant, n)
  const existing = store.nodes.get(key)
  if (existing !== undefined) return existing
  const created: ElementRecord = { c: now, b: ctx.client, o: ctx.owner, p: '{}' }
  store.nodes.putSync(key, created)
  bumpCount(store, typePrefix(tenant, n.ns, n.type), 1)
  return created
}

/** Spec 1.5: create, or append/overwrite just the named properties. */
export function putNode(sc: ShardContext, tenant: string, n: NodeRef, props: Record<string, unknown>, ctx: WriteContext): OpResult {
  const { store, metamodel } = sc
  const key = nodeKey(tenant, n)
  const existing = ensureNode(sc, tenant, n, ctx)
  const before = JSON.parse(existing.p) as Record<string, unknown>
  const after = { ...before, ...props }
  reindex(store, metamodel, tenant, n, before, after)
  store.nodes.putSync(key, { ...existing, p: JSON.stringify(after) })
  return NO_CONTENT
}

export function putNodeProperty(sc: ShardContext, tenant: string, n: NodeRef, key: string, value: unknown, ctx: WriteContext): OpResult {
  return putNode(sc, tenant, n, { [key]: value }, ctx)
}

/** Idempotent; removes the node's relations in both directions and their far adjacency entries. */
export function deleteNode({ store, metamodel }: ShardContext, tenant: string, n: NodeRef): OpResult {
  const key = nodeKey(tenant, n)
  const existing = store.nodes.get(key)
  if (existing === undefined) return NO_CONTENT
  const prefix = adjacencyPrefix(tenant, n)
  // Collected first: deleting under a live cursor of the same transaction is unsafe.
  const adjacent = [...store.adjacency.getKeys({ start: prefix, end: [...prefix, END] })] as Key[]
  for (const adj of adjacent) {
    const { neighbour, relation, direction } = relationOfAdjacency(adj)
    store.relations.removeSync(relationKey(tenant, relation))
    store.adjacency.removeSync(adjacencyKey(tenant, neighbour, n, direction === OUT ? IN : OUT, relation.rel))
    store.adjacency.removeSync(adj)
  }
  reindex(store, metamodel, tenant, n, JSON.parse(existing.p) as Record<string, unknown>, {})
  store.nodes.removeSync(key)
  bumpCount(store, typePrefix(tenant, n.ns, n.type), -1)
  return NO_CONTENT
}
