// Input checks of the graph routes, at the edge: path segments, reserved
// property names (spec 7), bodies, the consent-reference header and `limit`.
import { ApiError } from '../core/errors'
import type { NodeRef, RelationRef } from '../contract/messages'
import { checkKeyBytes } from '../http/key-length'

/**
 * Limits that keep every LMDB key under its 1978-byte maximum, measured as
 * the key stores them (keyPartBytes: UTF-8, U+0000-U+0004 count two). The
 * longest key, a schedule of a relation property, takes 1765 bytes at these
 * limits (test/unit/contract/key-encoding.test.ts).
 */
export const MAX_NAME_BYTES = 64
export const MAX_ID_BYTES = 384
export const MAX_PROPERTY_BYTES = 128

/** Spec 7, PUT node / PUT relation body; plus the two names docs/design/contracts.md reserves. */
export const RESERVED_BODY_NAMES: ReadonlySet<string> = new Set([
  'id', 'tid', 'fid', 'label', 'schema', 'created', 'createdByHybrisClient', 'consentReference', 'tenant', 'consent-reference',
])
/** Spec 7, PUT node property: the list has no createdByHybrisClient. */
export const RESERVED_PROPERTY_KEYS: ReadonlySet<string> = new Set([
  'id', 'tid', 'fid', 'label', 'schema', 'created', 'consentReference', 'tenant', 'consent-reference',
])
/**
 * A relation body also may not use the relation object's own fields
 * (fSchema, tSchema) or those the counter answer adds, which would collide.
 */
export const RESERVED_RELATION_NAMES: ReadonlySet<string> = new Set([
  ...RESERVED_BODY_NAMES, 'fSchema', 'tSchema', 'toCreated', 'fromCreated', 'relationCreated',
])

function checkLength(what: string, value: string, max: number): string {
  if (value === '') throw new ApiError('bad_request', `${what} must not be empty`)
  return checkKeyBytes(what, value, max)
}

/** Names starting with "@" are the platform's own event logs, never a tenant. */
export function tenantSegment(s: string): string {
  if (s.startsWith('@')) throw new ApiError('bad_request', 'a tenant name cannot start with "@"')
  return checkLength('tenant', s, MAX_NAME_BYTES)
}

export function nodeRef(ns: string, type: string, id: string, role = 'node'): NodeRef {
  return {
    ns: checkLength(`${role} namespace`, ns, MAX_NAME_BYTES),
    type: checkLength(`${role} type`, type, MAX_NAME_BYTES),
    id: checkLength(`${role} id`, id, MAX_ID_BYTES),
  }
}

/** Nine segments: fromNs/fromType/fromId/toNs/toType/toId/relNs/relType/relId. */
export function relationRef(s: readonly string[]): RelationRef {
  return {
    from: nodeRef(s[0]!, s[1]!, s[2]!, 'source node'),
    to: nodeRef(s[3]!, s[4]!, s[5]!, 'target node'),
    rel: nodeRef(s[6]!, s[7]!, s[8]!, 'relationship'),
  }
}

export function propertyKey(key: string): string {
  checkLength('property key', key, MAX_PROPERTY_BYTES)
  if (RESERVED_PROPERTY_KEYS.has(key)) throw new ApiError('validation_violation', `"${key}" is a reserved property name and cannot be set`)
  return key
}

export function counterName(name: string): string {
  checkLength('counter name', name, MAX_PROPERTY_BYTES)
  if (RESERVED_RELATION_NAMES.has(name)) {
    throw new ApiError('validation_violation', `"${name}" is a reserved name and cannot be a counter`)
  }
  return name
}

/**
 * Every write needs a non-empty consent-reference header, bounded like an
 * id; whether it is a granted consent of the tenant that may write the
 * element is the shard's decision (writeGrant in workers/store/sealing.ts).
 */
export function consentReference(header: string): string {
  const ref = header.trim()
  if (ref === '') throw new ApiError('bad_request', 'the consent-reference header is required to create or modify data')
  return checkKeyBytes('consent-reference', ref, MAX_ID_BYTES)
}

export function limitParam(raw: string | null): number | undefined {
  if (raw === null) return undefined
  if (!/^\d{1,9}$/.test(raw)) throw new ApiError('bad_request', `limit must be a whole number from 0 to 999999999, got "${raw}"`)
  return Number(raw)
}

/** A checker of the node-reference part `what` (namespace, type: name length; id: id length). */
function refPartCheck(what: string): (value: string) => void {
  const max = what.endsWith(' id') ? MAX_ID_BYTES : MAX_NAME_BYTES
  return (value) => { checkLength(what, value, max) }
}

function propertyNameCheck(reserved: ReadonlySet<string>): (name: string) => void {
  return (name) => {
    if (reserved.has(name)) throw new ApiError('validation_violation', `"${name}" is a reserved property name and cannot be set`)
    checkLength('property name', name, MAX_PROPERTY_BYTES)
  }
}

/** The checks the graph's schemas name with `x-check` (src/graph/params.ts): each throws the 400 it always did. */
export const GRAPH_CHECKS: Readonly<Record<string, (value: string) => void>> = {
  ...Object.fromEntries(['node', 'source node', 'target node', 'relationship'].flatMap((role) =>
    ['namespace', 'type', 'id'].map((part) => [`${role} ${part}`, refPartCheck(`${role} ${part}`)]))),
  'property key': (key) => { propertyKey(key) },
  'counter name': (name) => { counterName(name) },
  'consent reference': (ref) => { checkKeyBytes('consent reference', ref, MAX_ID_BYTES) },
  'webhook id': (id) => { checkKeyBytes('webhook id', id, MAX_ID_BYTES) },
  'property name': propertyNameCheck(RESERVED_BODY_NAMES),
  'relation property name': propertyNameCheck(RESERVED_RELATION_NAMES),
}
