// Consent references of the tenants of one shard (docs/design/data-protection.md). Each
// granted consent owns a data key in a key-file slot; revoking destroys that
// slot (crypto-shredding); granting again makes a new key in a new slot, so
// data sealed before stays locked for good.
import { randomBytes } from 'node:crypto'
import { now } from '../../src/core/clock'
import type { ConsentCaller } from '../../src/contract/messages'
import { NEXT_SLOT_KEY, consentKey, prefixRange, refOfSubjectKey, subjectConsentKey, subjectPrefix, tenantSlotKey, type Key } from './keys'
import { NO_CONTENT, fail, ok, type OpResult } from './result'
import type { ConsentRecord } from './schema'
import type { ShardStore } from './shard-store'
import { forgetKeptReads } from './kept-reads'

export const TENANT_OWNER = 'TENANT'

/** A new key slot with a fresh data key in it (inside the write transaction). */
export function newKeySlot(store: ShardStore): number {
  const slot = store.keySlots.get(NEXT_SLOT_KEY) ?? 0
  store.keySlots.putSync(NEXT_SLOT_KEY, slot + 1)
  store.keys.create(slot)
  return slot
}

/** The slot of the tenant's own data key (for tenant-owned types), created on first use. */
export function tenantSlot(store: ShardStore, tenant: string, create: boolean): number | undefined {
  const cached = store.cache.tenantSlots.get(tenant)
  if (cached !== undefined) return cached
  const slot = store.keySlots.get(tenantSlotKey(tenant))
  if (slot !== undefined) {
    store.cache.tenantSlots.set(tenant, slot)
    return slot
  }
  if (!create) return undefined
  const fresh = newKeySlot(store)
  store.keySlots.putSync(tenantSlotKey(tenant), fresh)
  store.cache.tenantSlots.set(tenant, fresh)
  return fresh
}

/**
 * The consent records cached of one tenant. Keyed tenant, then reference:
 * a read checks its element's consent on every element, and building one
 * key of the pair cost more than the lookup.
 */
function tenantConsents(store: ShardStore, tenant: string): Map<string, ConsentRecord> {
  let records = store.cache.consents.get(tenant)
  if (records === undefined) store.cache.consents.set(tenant, records = new Map())
  return records
}

export function getConsentRecord(store: ShardStore, tenant: string, ref: string): ConsentRecord | undefined {
  const cached = store.cache.consents.get(tenant)?.get(ref)
  if (cached !== undefined) return cached
  const record = store.consents.get(consentKey(tenant, ref))
  if (record !== undefined) {
    const records = tenantConsents(store, tenant)
    if (records.size >= CONSENT_CACHE_LIMIT) records.clear()
    records.set(ref, record)
  }
  return record
}

/** Cached consent records per tenant; a full tenant's are dropped together. */
const CONSENT_CACHE_LIMIT = 100_000

/** Every consent write goes through here, so the cache never disagrees with the store. */
function putConsent(store: ShardStore, tenant: string, ref: string, record: ConsentRecord): void {
  store.consents.putSync(consentKey(tenant, ref), record)
  store.subjects.putSync(subjectConsentKey(tenant, record.subject, ref), 1)
  tenantConsents(store, tenant).set(ref, record)
}

function view(ref: string, c: ConsentRecord): string {
  return JSON.stringify({ consentReference: ref, subject: c.subject, status: c.status, revokedProperties: c.revokedProperties })
}

/** A consent as a subject's list and export show it; `changed` and `clientId` only where recorded (format 6). */
export function consentEntry(ref: string, c: ConsentRecord): Record<string, unknown> {
  return {
    consentReference: ref, subject: c.subject, status: c.status, revokedProperties: c.revokedProperties, created: c.created,
    ...(c.changed === undefined ? {} : { changed: c.changed }), ...(c.client === undefined ? {} : { clientId: c.client }),
  }
}

/** The subject's consent references in the tenant, in order, after `after` (exclusive), at most `limit`. */
export function subjectRefs(store: ShardStore, tenant: string, subject: string, after: string | undefined, limit = Number.POSITIVE_INFINITY): string[] {
  const prefix = subjectPrefix(tenant, subject)
  const start: Key = after === undefined ? prefix : subjectConsentKey(tenant, subject, after)
  const refs: string[] = []
  if (limit <= 0) return refs
  for (const key of store.subjects.getKeys({ start, end: prefixRange(prefix).end, exclusiveStart: after !== undefined })) {
    refs.push(refOfSubjectKey(key))
    if (refs.length >= limit) break
  }
  return refs
}

/** A page of the subject's consents (a JSON array of consentEntry). */
export function listSubjectConsents(store: ShardStore, tenant: string, subject: string, after: string | undefined, limit: number | undefined): OpResult {
  const entries: Record<string, unknown>[] = []
  for (const ref of subjectRefs(store, tenant, subject, after, limit)) {
    const c = getConsentRecord(store, tenant, ref)
    if (c !== undefined) entries.push(consentEntry(ref, c))
  }
  return ok(200, JSON.stringify(entries))
}

const notFound = (ref: string): OpResult => fail('element_not_found', `consent reference "${ref}" not found`)

/** The end customer may act only on their own consent; the tenant on all of its consents. */
function permitted(c: ConsentRecord, caller: ConsentCaller): boolean {
  return caller.kind === 'tenant' || caller.sub === c.subject
}

/** `client`: the client id of the token that asked, kept with the consent (none for a token without one). */
export function createConsent(store: ShardStore, tenant: string, subject: string, time: number, client?: string): OpResult {
  // 128 random bits: unguessable, and bound to the tenant by where it is stored.
  const ref = `cr_${randomBytes(16).toString('base64url')}`
  const record: ConsentRecord = { subject, status: 'granted', slot: newKeySlot(store), revokedProperties: [], created: time, changed: time, ...(client === undefined ? {} : { client }) }
  putConsent(store, tenant, ref, record)
  return ok(201, JSON.stringify({ consentReference: ref }))
}

export function readConsent(store: ShardStore, tenant: string, ref: string, caller: ConsentCaller): OpResult {
  const c = getConsentRecord(store, tenant, ref)
  if (c === undefined) return notFound(ref)
  if (!permitted(c, caller)) return fail('forbidden', `consent reference "${ref}" belongs to another subject`)
  return ok(200, view(ref, c))
}

/**
 * Marks the consent revoked in this transaction and names the key slot to
 * destroy once it is committed (`shred`). The order is what makes crashes
 * safe: the record says `revoked` on disk before its slot is zeroed, so a
 * crash can leave only a revoked consent whose slot still holds a key, which
 * start-up finishes (finishRevocations); never a granted consent without a
 * key. Writes that see the record after this are refused (403).
 * `beforeRevoke` runs once the revocation is allowed, while the consent's
 * data still opens (the actor removes its search terms there:
 * nodes.ts, forgetSearchTerms).
 */
export function revokeConsent(
  store: ShardStore, tenant: string, ref: string, caller: ConsentCaller, shred: number[], beforeRevoke: () => void = () => undefined,
): OpResult {
  const c = getConsentRecord(store, tenant, ref)
  if (c === undefined) return notFound(ref)
  if (!permitted(c, caller)) return fail('forbidden', `consent reference "${ref}" belongs to another subject`)
  if (c.status === 'revoked') return NO_CONTENT
  beforeRevoke()
  store.cache.plain.forEach((entry, id) => { if (entry.o === ref) store.cache.plain.delete(id) })
  putConsent(store, tenant, ref, { ...c, status: 'revoked', changed: now() })
  shred.push(c.slot)
  return NO_CONTENT
}

/**
 * A reading thread's side of a consent change the owner committed (revoke,
 * grant, property revocation): drops the cached record, the decrypted
 * elements it owns and the data keys of its old and current slots, so the
 * next read decides from the committed record. The front thread answers the
 * change only after every thread ran this (src/shards/actor-pool.ts).
 */
export function forgetConsent(store: ShardStore, tenant: string, ref: string): void {
  const records = store.cache.consents.get(tenant)
  const cached = records?.get(ref)
  if (cached !== undefined) store.keys.forget(cached.slot)
  const current = store.consents.get(consentKey(tenant, ref))
  if (current !== undefined) store.keys.forget(current.slot)
  records?.delete(ref)
  store.cache.plain.forEach((entry, id) => { if (entry.o === ref) store.cache.plain.delete(id) })
  forgetKeptReads()
}

/**
 * Start-up: destroys the key slots of revoked consents that a crash left
 * between the committed revocation and the slot's destruction. Returns how
 * many it finished.
 */
export function finishRevocations(store: ShardStore, destroy: (slots: number[]) => void = (slots) => slots.forEach((s) => store.keys.destroy(s))): number {
  const slots: number[] = []
  for (const { value } of store.consents.getRange()) {
    if (value.status === 'revoked' && store.keyFile.read(value.slot) !== undefined) slots.push(value.slot)
  }
  destroy(slots)
  return slots.length
}

export function grantConsent(store: ShardStore, tenant: string, ref: string, caller: ConsentCaller): OpResult {
  const c = getConsentRecord(store, tenant, ref)
  if (c === undefined) return notFound(ref)
  if (!permitted(c, caller)) return fail('forbidden', `consent reference "${ref}" belongs to another subject`)
  if (c.status === 'granted') return NO_CONTENT
  putConsent(store, tenant, ref, { ...c, status: 'granted', slot: newKeySlot(store), changed: now() })
  return NO_CONTENT
}

export function setRevokedProperties(store: ShardStore, tenant: string, ref: string, names: string[], caller: ConsentCaller): OpResult {
  const c = getConsentRecord(store, tenant, ref)
  if (c === undefined) return notFound(ref)
  if (!permitted(c, caller)) return fail('forbidden', `consent reference "${ref}" belongs to another subject`)
  putConsent(store, tenant, ref, { ...c, revokedProperties: [...new Set(names)], changed: now() })
  return NO_CONTENT
}
