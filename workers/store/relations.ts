// Relation and counter writes and the relation read of one shard. A relation
// is stored once and listed in the adjacency lists of both its end nodes; its
// properties are sealed under its owner's key like a node's.
import type { RelationRef, WriteContext } from '../../src/contract/messages'
import { own } from '../../src/model/own-key'
import { IN, OUT, adjacencyKey, ownedRelationKey, relationKey, type Key } from './keys'
import type { ShardContext } from './context'
import { changeEvent, ensureNode, readElement, relationPayload } from './nodes'
import { recordTimings } from './timings'
import { counterResult, relationObject, type ElementRecord } from './records'
import type { ElementMeta, StoredElement } from './schema'
import { NO_CONTENT, fail, ok, type OpError, type OpResult } from './result'
import { openElement, revokedPropertyWritten, sealElement, withoutProperties, writeGrant, type WriteGrant } from './sealing'

function describe(r: RelationRef): string {
  return `relation ${r.from.ns}/${r.from.type}/${r.from.id} -> ${r.to.ns}/${r.to.type}/${r.to.id} (${r.rel.ns}/${r.rel.type}/${r.rel.id})`
}

function relationOwnedBy(sc: ShardContext, tenant: string, r: RelationRef): 'customer' | 'tenant' {
  return sc.metamodel.relationType(tenant, [r.from.ns, r.from.type, r.to.ns, r.to.type, r.rel.ns, r.rel.type])?.owner ?? 'customer'
}

export function getRelation({ store, urls }: ShardContext, tenant: string, rel: RelationRef): OpResult {
  return readElement(store, store.relations, tenant, relationKey(tenant, rel), describe(rel), (r) => relationObject(urls, tenant, rel, r))
}

interface Prepared {
  kind: 'prepared'
  key: Key
  grant: WriteGrant
  existing: StoredElement | undefined
  /** the stored properties, or {} for a new or locked relation (which starts afresh) */
  before: Record<string, unknown>
}

/**
 * The consent and ownership checks of a relation write, and what it merges with.
 * `keep`: cache what is decrypted (a counter, written again soon; sealing.ts keeps it fresh).
 */
function prepare(sc: ShardContext, tenant: string, rel: RelationRef, ctx: WriteContext, names: Record<string, unknown>, keep: boolean): Prepared | OpError {
  const key = relationKey(tenant, rel)
  const existing = sc.store.relations.get(key)
  const grant = writeGrant(sc.store, tenant, ctx.consent, relationOwnedBy(sc, tenant, rel), existing?.o, describe(rel))
  if (grant.kind === 'error') return grant
  const refused = revokedPropertyWritten(grant, names)
  if (refused !== undefined) return refused
  let before: Record<string, unknown> = {}
  if (existing !== undefined) {
    const opened = openElement(sc.store, tenant, key, existing, false, keep)
    if (opened.kind === 'open') before = JSON.parse(opened.record.p) as Record<string, unknown>
  }
  return { kind: 'prepared', key, grant, existing, before }
}

interface Written {
  kind: 'written'
  from: ElementMeta
  to: ElementMeta
  record: ElementRecord
}

/** Creates missing end nodes, then writes the relation with `after` as its properties. */
function write(
  sc: ShardContext, tenant: string, rel: RelationRef, ctx: WriteContext, prep: Prepared, after: Record<string, unknown>, property: string | undefined,
): Written | OpError {
  const from = ensureNode(sc, tenant, rel.from, ctx)
  if (from.kind === 'error') return from
  const to = ensureNode(sc, tenant, rel.to, ctx)
  if (to.kind === 'error') return to
  const record = { c: prep.existing?.c ?? sc.now, b: prep.existing?.b ?? ctx.client, o: prep.grant.owner, p: JSON.stringify(after) }
  sc.store.relations.putSync(prep.key, sealElement(sc.store, prep.key, prep.grant.slot, record))
  if (prep.existing?.o !== prep.grant.owner) {
    if (prep.existing !== undefined) sc.store.ownedRelations.removeSync(ownedRelationKey(tenant, prep.existing.o, rel))
    sc.store.ownedRelations.putSync(ownedRelationKey(tenant, prep.grant.owner, rel), 1)
  }
  if (prep.existing === undefined) {
    sc.store.adjacency.putSync(adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel), 1)
    sc.store.adjacency.putSync(adjacencyKey(tenant, rel.to, rel.from, IN, rel.rel), 1)
    changeEvent(sc, tenant, 'CREATE', sc.urls.relationSchema(tenant, rel), relationPayload(ctx.consent, rel), ctx.trace)
  }
  recordTimings(sc, tenant, { kind: 'relation', relation: rel, property }, prep.grant.owner, ctx)
  if (ctx.schedule !== undefined || ctx.decay !== undefined) sc.touched.add(tenant)
  return { kind: 'written', from: from.meta, to: to.meta, record }
}

export function putRelation(sc: ShardContext, tenant: string, rel: RelationRef, props: Record<string, unknown>, ctx: WriteContext): OpResult {
  const prep = prepare(sc, tenant, rel, ctx, props, false)
  if (prep.kind === 'error') return prep
  const done = write(sc, tenant, rel, ctx, prep, { ...prep.before, ...props }, undefined)
  return done.kind === 'written' ? NO_CONTENT : done
}

/** Idempotent: 204 whether or not the relation existed; the end nodes stay. */
export function deleteRelation(sc: ShardContext, tenant: string, rel: RelationRef, trace: string | undefined): OpResult {
  const { store } = sc
  const key = relationKey(tenant, rel)
  const stored = store.relations.get(key)
  if (stored === undefined) return NO_CONTENT
  store.relations.removeSync(key)
  store.ownedRelations.removeSync(ownedRelationKey(tenant, stored.o, rel))
  changeEvent(sc, tenant, 'DELETE', sc.urls.relationSchema(tenant, rel), relationPayload(stored.o, rel), trace)
  store.adjacency.removeSync(adjacencyKey(tenant, rel.from, rel.to, OUT, rel.rel))
  store.adjacency.removeSync(adjacencyKey(tenant, rel.to, rel.from, IN, rel.rel))
  return NO_CONTENT
}

/**
 * Adds one to an integer property of the relation. Atomic because one actor
 * applies every write of its shard in order inside one write transaction.
 */
export function incrementCounter(sc: ShardContext, tenant: string, rel: RelationRef, name: string, ctx: WriteContext): OpResult {
  const prep = prepare(sc, tenant, rel, ctx, { [name]: 1 }, true)
  if (prep.kind === 'error') return prep
  const value = own(prep.before, name)
  if (value !== undefined && !Number.isSafeInteger(value)) {
    return fail('validation_violation', `property "${name}" of ${describe(rel)} is not an integer counter`)
  }
  const done = write(sc, tenant, rel, ctx, prep, { ...prep.before, [name]: ((value as number | undefined) ?? 0) + 1 }, name)
  if (done.kind === 'error') return done
  // The answer shows no property whose consent is revoked.
  const shown = { ...done.record, p: withoutProperties(done.record.p, prep.grant.revokedProperties) }
  return ok(200, counterResult(relationObject(sc.urls, tenant, rel, shown), done.from, done.to, done.record))
}
