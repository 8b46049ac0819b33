// Relation and counter writes and the relation read of one shard. A relation
// is stored once and listed in the adjacency lists of both its end nodes.
import type { RelationRef, WriteContext } from '../../src/shard/messages'
import { IN, OUT, adjacencyKey, relationKey } from './keys'
import { ensureNode, type ShardContext } from './nodes'
import { counterResult, relationObject, type ElementRecord } from './records'
import { NO_CONTENT, fail, ok, type OpResult } from './result'

function describe(r: RelationRef): string {
  return `${r.from.ns}/${r.from.type}/${r.from.id} -> ${r.to.ns}/${r.to.type}/${r.to.id} (${r.rel.ns}/${r.rel.type}/${r.rel.id})`
}

export function getRelation({ store, urls }: ShardContext, tenant: string, rel: RelationRef): OpResult {
  const r = store.relations.get(relationKey(tenant, rel))
  if (r === undefined) return fail('element_not_found', `relation ${describe(rel)} not found`)
  return ok(200, relationObject(urls, tenant, rel, r))
}

/** Creates missing end nodes and the relation; returns the three records. */
function ensureRelation(sc: ShardContext, tenant: string, rel: RelationRef, ctx: WriteContext) {
  const from = ensureNode(sc, tenant, rel.from, ctx)
  const to = ensureNode(sc, tenant, rel.to, ctx)
  const key = relationKey(tenant, rel)
  let relation = sc.store.relations.get(key)
  if (relation === undefined) {
    relation = { c: sc.now, b: ctx.client, o: ctx.owner, p: '{}' }
    sc.store.relations.putSync(key, relation)
    sc.store.adjacency.putSync(adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel), 1)
    sc.store.adjacency.putSync(adjacencyKey(tenant, rel.to, rel.from, IN, rel.rel), 1)
  }
  return { from, to, relation, key }
}

export function putRelation(sc: ShardContext, tenant: string, rel: RelationRef, props: Record<string, unknown>, ctx: WriteContext): OpResult {
  const { relation, key } = ensureRelation(sc, tenant, rel, ctx)
  if (Object.keys(props).length > 0) {
    const merged = { ...(JSON.parse(relation.p) as Record<string, unknown>), ...props }
    sc.store.relations.putSync(key, { ...relation, p: JSON.stringify(merged) })
  }
  return NO_CONTENT
}

/** Idempotent: 204 whether or not the relation existed; the end nodes stay. */
export function deleteRelation({ store }: ShardContext, tenant: string, rel: RelationRef): OpResult {
  const key = relationKey(tenant, rel)
  if (store.relations.get(key) === undefined) return NO_CONTENT
  store.relations.removeSync(key)
  store.adjacency.removeSync(adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel))
  store.adjacency.removeSync(adjacencyKey(tenant, rel.to, rel.from, IN, rel.rel))
  return NO_CONTENT
}

/**
 * Adds one to an integer property of the relation. Atomic because one actor
 * applies every write of its shard in order inside one write transaction.
 */
export function incrementCounter(sc: ShardContext, tenant: string, rel: RelationRef, name: string, ctx: WriteContext): OpResult {
  const key = relationKey(tenant, rel)
  const current = sc.store.relations.get(key)
  if (current !== undefined) {
    const value = (JSON.parse(current.p) as Record<string, unknown>)[name]
    if (value !== undefined && !Number.isSafeInteger(value)) {
      return fail('validation_violation', `property "${name}" of relation ${describe(rel)} is not an integer counter`)
    }
  }
  const { from, to, relation } = ensureRelation(sc, tenant, rel, ctx)
  const props = JSON.parse(relation.p) as Record<string, unknown>
  props[name] = ((props[name] as number | undefined) ?? 0) + 1
  const updated: ElementRecord = { ...relation, p: JSON.stringify(props) }
  sc.store.relations.putSync(key, updated)
  return ok(200, counterResult(relationObject(sc.urls, tenant, rel, updated), from, to, updated))
}
