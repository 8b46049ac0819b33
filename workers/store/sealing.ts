// Sealing and opening an element's custom properties under its owner's data
// key, and the consent checks of a write. This is where spec 1.4, 1.6 and 1.8
// are decided for one element: who may write it, and what a read may see.
import { matchesFingerprint, open, seal, sealedFingerprint } from '../crypto/seal'
import { TENANT_OWNER, getConsentRecord, tenantSlot } from './consents'
import type { Key } from './keys'
import type { ElementRecord } from './records'
import type { ElementMeta, StoredElement } from './schema'
import { fail, type OpError } from './result'
import type { PlainEntry, ShardStore } from './shard-store'
import { forgetKeptReads } from './kept-reads'

export type Opened =
  | { kind: 'open'; record: ElementRecord; hidden: readonly string[] }
  /** the owner's whole consent is revoked */
  | { kind: 'revoked'; meta: ElementMeta }
  /** cannot be decrypted: sealed under a destroyed key (revoked, then granted again) or altered */
  | { kind: 'locked'; meta: ElementMeta }

/** The element's identity, bound into its ciphertext as additional data; also its id in the decrypted-element cache. */
export const elementId = (key: Key): string => JSON.stringify(key)

/** Only the meta fields, whatever else `s` holds. */
export function meta(s: ElementMeta): ElementMeta {
  return { c: s.c, b: s.b, o: s.o }
}

/**
 * Opens the properties of an element. With `forRead`, properties whose
 * consent is revoked are left out; writes merge with everything stored.
 * Without `keep`, what is decrypted is not added to the in-memory cache:
 * scans add only their first elements (SCAN_CACHE_BUDGET in scans.ts), so a
 * large neighbourhood neither grows memory nor evicts what single reads use.
 */
export function openElement(store: ShardStore, tenant: string, key: Key, stored: StoredElement, forRead: boolean, keep = true, id = elementId(key)): Opened {
  let hidden: string[] = []
  if (stored.o === TENANT_OWNER) {
    if (tenantSlot(store, tenant, false) !== stored.k) return { kind: 'locked', meta: meta(stored) }
  } else {
    const consent = getConsentRecord(store, tenant, stored.o)
    if (consent === undefined) return { kind: 'locked', meta: meta(stored) }
    if (consent.status === 'revoked') return { kind: 'revoked', meta: meta(stored) }
    if (consent.slot !== stored.k) return { kind: 'locked', meta: meta(stored) }
    hidden = consent.revokedProperties
  }
  const dataKey = store.keys.get(stored.k)
  if (dataKey === undefined) return { kind: 'locked', meta: meta(stored) }
  let p = cachedPlain(store, id, stored)
  if (p === undefined) {
    const plain = open(dataKey, stored.s, id)
    if (plain === undefined) return { kind: 'locked', meta: meta(stored) }
    p = plain.toString('utf8')
    if (keep) remember(store, id, stored, p)
  }
  return { kind: 'open', record: { ...meta(stored), p: forRead ? withoutProperties(p, hidden) : p }, hidden }
}

/** Properties JSON without the named ones (those whose consent is revoked). */
export function withoutProperties(p: string, names: readonly string[]): string {
  if (names.length === 0) return p
  const props = JSON.parse(p) as Record<string, unknown>
  for (const name of names) delete props[name]
  return JSON.stringify(props)
}

export function sealElement(store: ShardStore, key: Key, slot: number, record: ElementRecord): StoredElement {
  const dataKey = store.keys.get(slot)
  if (dataKey === undefined) throw new Error(`data key slot ${slot} is destroyed`)
  const id = elementId(key)
  const stored = { c: record.c, b: record.b, o: record.o, k: slot, s: seal(dataKey, record.p, id) }
  // A write refreshes a cached element but adds none. An enricher's upserts on
  // many ids are rarely read back soon, and caching each one made entries that
  // died in the old generation, whose collections paused the actor for 20-30 ms
  // (bench/MEASUREMENTS.md, "A write adds nothing to the element cache,
  // 2026-11-27, midday").
  if (store.cache.plain.has(id)) remember(store, id, stored, record.p)
  return stored
}

/**
 * Decrypted elements kept in memory per thread (shard-store.ts); past this
 * many, the oldest tenth goes. About 1.3 KB an entry with ~250 bytes of
 * properties and its rendered neighbours chunk: ~85 MB a thread when full.
 * 20,000 a shard before: a one-tenant graph of 60,000 elements read at random
 * then decrypted two of three elements of every neighbours read.
 */
export const PLAIN_CACHE_LIMIT = 64_000

function cachedPlain(store: ShardStore, id: string, stored: StoredElement): string | undefined {
  return cachedEntry(store, id, stored)?.p
}

/** The cache entry of element `id` when it was made from `stored`. */
export function cachedEntry(store: ShardStore, id: string, stored: StoredElement): PlainEntry | undefined {
  const hit = store.cache.plain.get(id)
  if (hit === undefined || hit.k !== stored.k || hit.o !== stored.o || !matchesFingerprint(hit.f, stored.s)) return undefined
  return hit
}

function remember(store: ShardStore, id: string, stored: StoredElement, p: string): void {
  rememberPlain(store.cache.plain, id, { o: stored.o, k: stored.k, f: sealedFingerprint(stored.s), p })
}

/**
 * Adds an entry, or replaces the entry of the same id where it stands. A full
 * cache drops its oldest tenth in one pass. Both because a Map keeps the slot
 * of a deleted entry until it is rehashed: dropping one entry at a time
 * started a new iterator at the front for every write, which walked over every
 * slot deleted before (~30 us a write once the cache was full), and deleting
 * and re-adding a rewritten id (a hot counter) lengthened its hash chain on
 * every write (~2-3 us a write). A rewritten element is therefore evicted by
 * when it was first cached, not by when it was last written.
 */
export function rememberPlain(cache: Map<string, PlainEntry>, id: string, entry: PlainEntry): void {
  const size = cache.size
  cache.set(id, entry)
  if (cache.size === size || cache.size <= PLAIN_CACHE_LIMIT) return
  let n = PLAIN_CACHE_LIMIT / 10
  let chunks = false
  for (const [oldest, evicted] of cache) {
    chunks ||= evicted.chunk !== undefined
    cache.delete(oldest)
    if (--n === 0) break
  }
  // Kept neighbourhoods are made of rendered chunks: once one they may share is evicted, they would hold
  // their own copies, so they go too. Evicting elements no neighbours read rendered (written, listed) keeps them.
  if (chunks) forgetKeptReads()
}

/** What a permitted write seals with: the owner it records and the key slot. */
export interface WriteGrant {
  kind: 'grant'
  owner: string
  slot: number
  /** properties of this consent that may not be written */
  revokedProperties: readonly string[]
}

/**
 * Spec 1.4 and 1.6: the consent reference must be a granted consent of this
 * tenant; customer-owned data is owned by the reference that created it;
 * tenant-owned data (owner TENANT) may be written with any valid reference.
 */
export function writeGrant(
  store: ShardStore, tenant: string, consentRef: string,
  ownedBy: 'customer' | 'tenant', existingOwner: string | undefined, what: string,
): WriteGrant | OpError {
  const consent = getConsentRecord(store, tenant, consentRef)
  if (consent === undefined) return fail('forbidden', `consent reference "${consentRef}" is not a consent of tenant "${tenant}"`)
  if (consent.status === 'revoked') return fail('forbidden', `consent reference "${consentRef}" is revoked`)
  if (ownedBy === 'tenant') {
    return { kind: 'grant', owner: TENANT_OWNER, slot: tenantSlot(store, tenant, true)!, revokedProperties: [] }
  }
  if (existingOwner !== undefined && existingOwner !== consentRef) {
    return fail('forbidden', `${what} is owned by another consent reference`)
  }
  return { kind: 'grant', owner: consentRef, slot: consent.slot, revokedProperties: consent.revokedProperties }
}

/** A write naming a property whose consent is revoked is refused, naming it. */
export function revokedPropertyWritten(grant: WriteGrant, props: Record<string, unknown>): OpError | undefined {
  const hit = grant.revokedProperties.find((name) => Object.prototype.hasOwnProperty.call(props, name))
  return hit === undefined ? undefined : fail('forbidden', `consent to property "${hit}" is revoked`)
}
