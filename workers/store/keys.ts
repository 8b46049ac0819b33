// The LMDB key layout of a shard. Keys are arrays (src/contract/key-encoding.ts:
// element-wise order for strings of any length and content), so every prefix
// of an array key is a range: a type's nodes, a node's adjacency list, an
// index term's nodes are each one prefix scan.
import type { NodeRef, RelationRef } from '../../src/contract/messages'
import { KEY_END, type KeyPart } from '../../src/contract/key-encoding'

/** Sorts after every string and number, so [...prefix, END] closes a prefix range. */
export const END = KEY_END

export type Key = (string | number)[]

/** A key as read back: ordered-binary writes [x] and x alike, so a one-element key reads back as x alone. */
export const keyParts = (raw: unknown): Key => (Array.isArray(raw) ? raw : [raw]) as Key

/** Direction of an adjacency entry as seen from the node that owns the list. */
export const OUT = 0
export const IN = 1

export const nodeKey = (tenant: string, n: NodeRef): Key => [tenant, n.ns, n.type, n.id]
export const typePrefix = (tenant: string, ns: string, type: string): Key => [tenant, ns, type]

export const relationKey = (tenant: string, r: RelationRef): Key => [
  tenant, r.from.ns, r.from.type, r.from.id, r.to.ns, r.to.type, r.to.id, r.rel.ns, r.rel.type, r.rel.id,
]

/**
 * Adjacency entries are grouped by neighbour after the owner's identity, so a
 * neighbours read meets all relations to one neighbour in a row.
 */
export const adjacencyKey = (tenant: string, owner: NodeRef, neighbour: NodeRef, direction: number, rel: NodeRef): Key => [
  tenant, owner.ns, owner.type, owner.id, neighbour.ns, neighbour.type, neighbour.id, direction, rel.ns, rel.type, rel.id,
]
export const adjacencyPrefix = (tenant: string, owner: NodeRef): Key => [tenant, owner.ns, owner.type, owner.id]

/** Decodes an adjacency key back into the relation it stands for. */
export function relationOfAdjacency(key: Key): { neighbour: NodeRef; relation: RelationRef; direction: number } {
  const [, ons, otype, oid, nns, ntype, nid, direction, rns, rtype, rid] = key as [string, string, string, string, string, string, string, number, string, string, string]
  const owner = { ns: ons, type: otype, id: oid }
  const neighbour = { ns: nns, type: ntype, id: nid }
  const rel = { ns: rns, type: rtype, id: rid }
  const relation = direction === OUT ? { from: owner, to: neighbour, rel } : { from: neighbour, to: owner, rel }
  return { neighbour, relation, direction }
}

export const indexKey = (tenant: string, ns: string, type: string, property: string, term: string, id: string): Key => [
  tenant, ns, type, property, term, id,
]
export const indexPrefix = (tenant: string, ns: string, type: string, property: string, term: string): Key => [
  tenant, ns, type, property, term,
]

/** [tenant, sequence]: a tenant's events in sequence order. */
export const eventKey = (tenant: string, seq: number): Key => [tenant, seq]
export const eventHeadKey = (tenant: string): Key => [tenant]

export const consentKey = (tenant: string, ref: string): Key => [tenant, ref]
/** The slot of a tenant's own data key. */
export const tenantSlotKey = (tenant: string): Key => [tenant]
/**
 * The next free key slot. It shares its database with tenantSlotKey, so it
 * has a name no tenant can have (tenants never start with "@"); disk
 * format 1 used ['nextSlot'], moved by migrateSlotCounter.
 */
export const NEXT_SLOT_KEY: Key = ['@nextSlot']
export const LEGACY_NEXT_SLOT_KEY: Key = ['nextSlot']

/** [dueAt, tenant, scheduleId]: due schedules are a range read from the start. */
export const scheduleKey = (dueAt: number, tenant: string, scheduleId: string): Key => [dueAt, tenant, scheduleId]
export const scheduleIdKey = (tenant: string, scheduleId: string): Key => [tenant, scheduleId]

export const webhookKey = (tenant: string, id: string): Key => [tenant, id]
/** Every key that starts with `prefix`. */
export const prefixRange = (prefix: Key): { start: Key; end: KeyPart[] } => ({ start: prefix, end: [...prefix, END] })
