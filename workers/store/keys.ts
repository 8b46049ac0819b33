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
/** The node id of a node key or an index key (both end with it). */
export const nodeIdOf = (key: Key): string => key[key.length - 1] as string

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

/** [tenant, owner, ns, type, id]: the nodes each consent (or TENANT) owns, for what a revocation must clean up. */
export const ownedKey = (tenant: string, owner: string, n: NodeRef): Key => [tenant, owner, n.ns, n.type, n.id]
export const ownedPrefix = (tenant: string, owner: string): Key => [tenant, owner]
/** [tenant, owner, from..., to..., rel...]: the relations each consent (or TENANT) owns (format 6). */
export const ownedRelationKey = (tenant: string, owner: string, r: RelationRef): Key => [
  tenant, owner, r.from.ns, r.from.type, r.from.id, r.to.ns, r.to.type, r.to.id, r.rel.ns, r.rel.type, r.rel.id,
]
export function ownedRelationOf(raw: unknown): RelationRef {
  const k = keyParts(raw) as string[]
  return { from: { ns: k[2]!, type: k[3]!, id: k[4]! }, to: { ns: k[5]!, type: k[6]!, id: k[7]! }, rel: { ns: k[8]!, type: k[9]!, id: k[10]! } }
}
/** The tenant and relation of a relationKey. */
export function relationOfKey(raw: unknown): { tenant: string; relation: RelationRef } {
  const k = keyParts(raw) as string[]
  return { tenant: k[0]!, relation: { from: { ns: k[1]!, type: k[2]!, id: k[3]! }, to: { ns: k[4]!, type: k[5]!, id: k[6]! }, rel: { ns: k[7]!, type: k[8]!, id: k[9]! } } }
}
export function ownedNodeOf(raw: unknown): NodeRef {
  const key = keyParts(raw)
  return { ns: key[2] as string, type: key[3] as string, id: key[4] as string }
}
/** The tenant and node of a nodeKey. */
export function nodeOfKey(raw: unknown): { tenant: string; node: NodeRef } {
  const key = keyParts(raw)
  return { tenant: key[0] as string, node: { ns: key[1] as string, type: key[2] as string, id: key[3] as string } }
}

export const indexKey = (tenant: string, ns: string, type: string, property: string, term: string, id: string): Key => [
  tenant, ns, type, property, term, id,
]
export const indexPrefix = (tenant: string, ns: string, type: string, property: string, term: string): Key => [
  tenant, ns, type, property, term,
]
/** The tenant, node type and property an indexKey files its term under. */
export function indexedPropertyOf(raw: unknown): { tenant: string; ns: string; type: string; property: string } {
  const key = keyParts(raw)
  return { tenant: key[0] as string, ns: key[1] as string, type: key[2] as string, property: key[3] as string }
}

/** [tenant, sequence]: a tenant's events in sequence order. */
export const eventKey = (tenant: string, seq: number): Key => [tenant, seq]
export const eventHeadKey = (tenant: string): Key => [tenant]
export const eventSequenceOf = (key: Key): number => key[1] as number
/** The tenant of an event head key (a one-element key: read back with keyParts). */
export const eventHeadTenantOf = (raw: unknown): string => keyParts(raw)[0] as string

export const consentKey = (tenant: string, ref: string): Key => [tenant, ref]
/** [tenant, subject, ref]: each subject's consents (format 6), in reference order. */
export const subjectConsentKey = (tenant: string, subject: string, ref: string): Key => [tenant, subject, ref]
export const subjectPrefix = (tenant: string, subject: string): Key => [tenant, subject]
/** The consent reference of a subjectConsentKey. */
export const refOfSubjectKey = (raw: unknown): string => keyParts(raw)[2] as string
export function consentOf(raw: unknown): { tenant: string; ref: string } {
  const [tenant, ref] = keyParts(raw) as [string, string]
  return { tenant, ref }
}
/** The slot of a tenant's own data key. */
export const tenantSlotKey = (tenant: string): Key => [tenant]
/**
 * The next free key slot. It shares its database with tenantSlotKey, so it
 * has a name no tenant can have (tenants never start with "@"); disk
 * format 1 used ['nextSlot'], moved by migrateSlotCounter.
 */
export const NEXT_SLOT_KEY: Key = ['@nextSlot']
export const LEGACY_NEXT_SLOT_KEY: Key = ['nextSlot']

/** The tenant of a key-slot key, or undefined for the slot counters that share the database. */
export function tenantOfSlotKey(raw: unknown): string | undefined {
  // A one-element key reads back as its element (keyParts).
  const parts = keyParts(raw)
  const tenant = parts[0]
  if (parts.length !== 1 || tenant === NEXT_SLOT_KEY[0] || tenant === LEGACY_NEXT_SLOT_KEY[0]) return undefined
  return tenant as string
}

/** [dueAt, tenant, scheduleId]: due schedules are a range read from the start. */
export const scheduleKey = (dueAt: number, tenant: string, scheduleId: string): Key => [dueAt, tenant, scheduleId]
export const scheduleIdKey = (tenant: string, scheduleId: string): Key => [tenant, scheduleId]
export function scheduleOf(key: Key): { dueAt: number; tenant: string; scheduleId: string } {
  const [dueAt, tenant, scheduleId] = key as [number, string, string]
  return { dueAt, tenant, scheduleId }
}
/** Ends the range of the schedules due at `now` or before. */
export const dueBy = (now: number): KeyPart[] => [now, END]

export const webhookKey = (tenant: string, id: string): Key => [tenant, id]
export function webhookOf(key: Key): { tenant: string; id: string } {
  const [tenant, id] = key as [string, string]
  return { tenant, id }
}
/** A tenant's keys in a database keyed [tenant, ...] (events, webhooks). */
export const tenantPrefix = (tenant: string): Key => [tenant]
/** Every key that starts with `prefix`. */
export const prefixRange = (prefix: Key): { start: Key; end: KeyPart[] } => ({ start: prefix, end: [...prefix, END] })
