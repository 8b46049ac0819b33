// The chunks of a neighbours read, kept rendered in the decrypted-element
// cache (PlainEntry.chunk) so that a hot neighbour costs one read of its
// stored bytes, a comparison and the consent checks: no decoding, no
// decryption, no rendering. The entry is the same one a write replaces and a
// consent change drops (sealing.ts, consents.ts: forgetConsent), so it needs
// no invalidation of its own; and it is used only while
// - the stored bytes are those it was rendered from: the bytes before the
//   sealed field compared as they are, the sealed field by its fingerprint
//   (length, nonce, tag: workers/crypto/seal.ts says why that suffices);
// - the owner's consent is granted with the key slot it was sealed under and
//   the same revoked properties (the record's array, by identity: every
//   consent write makes a new record), or, for tenant-owned data, the
//   tenant's key slot is still the one it was sealed under;
// - the data key is still there (a destroyed key locks the element).
import type { Database } from 'lmdb'
import { matchesFingerprint } from '../crypto/seal'
import { TENANT_OWNER, getConsentRecord, tenantSlot } from './consents'
import type { Key } from './keys'
import type { ElementMeta, StoredElement } from './schema'
import { cachedEntry, elementId, openElement } from './sealing'
import type { PlainEntry, RenderedChunk, ShardStore } from './shard-store'

/** Renders an element's chunk from its meta and what a read may see of its properties (undefined: locked). */
export type RenderChunk = (meta: ElementMeta, p: string | undefined) => string

/** Longer chunks are rendered on every read: the cache's memory stays bounded by its entry count. */
const CHUNK_LIMIT = 16 * 1024

/** lmdb-js's decoder of the database: with `decoderCopies` it copies what it reads out of the shared buffer. */
interface Decoding {
  decoder: { decode(bytes: Buffer): unknown }
  decoderCopies?: boolean
}

/** How many elements a scan may still add to the cache (scans.ts, SCAN_CACHE_BUDGET). */
export interface CacheBudget {
  left: number
  /** every chunk returned so far is the string the cache keeps (kept-reads.ts shares them) */
  allKept: boolean
  /** no element returned so far was locked (an answer with a locked element is not kept anywhere) */
  allOpen: boolean
}

/**
 * The chunk of the element stored at `key` in `db` (undefined when there is
 * none), rendered by `render`; from the cache when still valid. An element
 * not in the cache is added while `budget` lasts: so each read of a large
 * neighbourhood adds a few more of it, and repeated reads of it end up
 * served from the cache without one read evicting much.
 */
export function elementChunk(store: ShardStore, db: Database<StoredElement, Key>, tenant: string, key: Key, budget: CacheBudget, render: RenderChunk): string | undefined {
  // lmdb-js's shared read buffer: valid only until the next read of any database.
  const raw = db.getBinaryFast(key)
  if (raw === undefined) return undefined
  const id = elementId(key)
  const entry = store.cache.plain.get(id)
  if (entry?.chunk !== undefined && sameBytes(entry, entry.chunk, raw) && stillOpens(store, tenant, entry, entry.chunk)) return entry.chunk.text
  const decoding = db as unknown as Decoding
  const bytes = decoding.decoderCopies === true ? raw : Buffer.from(raw.subarray(0, raw.length))
  const stored = decoding.decoder.decode(bytes) as StoredElement
  const sealedAt = raw.length - stored.s.length
  // The head can be kept only when the sealed field ends the value (as sealElement writes it).
  const head = sealedAt > 0 && Buffer.compare(stored.s, raw.subarray(sealedAt, raw.length)) === 0 ? Buffer.from(raw.subarray(0, sealedAt)) : undefined
  const cached = cachedEntry(store, id, stored) !== undefined
  const opened = openElement(store, tenant, key, stored, true, budget.left > 0, id)
  if (opened.kind !== 'open') {
    budget.allKept = false
    budget.allOpen = false
    return render(stored, undefined)
  }
  if (!cached) budget.left--
  const text = render(stored, opened.record.p)
  const kept = cachedEntry(store, id, stored)
  if (kept !== undefined && head !== undefined && text.length <= CHUNK_LIMIT) {
    kept.chunk = { text: flat(text), head, hidden: stored.o === TENANT_OWNER ? undefined : opened.hidden }
    return kept.chunk.text
  }
  budget.allKept = false
  return text
}

/**
 * `text` made one flat string. A rendered chunk is a tree of the pieces its
 * template joined, and V8 does not flatten a tree it copies out of (a join,
 * a structured clone): every read of a cached chunk walked its tree again,
 * ~5 us a chunk and a fifth of a neighbours read. Converting it to a number
 * flattens it in place, once.
 */
function flat(text: string): string {
  Number(text)
  return text
}

function sameBytes(entry: PlainEntry, chunk: RenderedChunk, raw: Buffer): boolean {
  const at = chunk.head.length
  // compare(target, targetStart, targetEnd): no view of the shared buffer is made.
  return raw.length > at && chunk.head.compare(raw, 0, at) === 0 && matchesFingerprint(entry.f, raw, at, raw.length)
}

function stillOpens(store: ShardStore, tenant: string, entry: PlainEntry, chunk: RenderedChunk): boolean {
  if (entry.o === TENANT_OWNER) {
    if (tenantSlot(store, tenant, false) !== entry.k) return false
  } else {
    const consent = getConsentRecord(store, tenant, entry.o)
    if (consent === undefined || consent.status !== 'granted' || consent.slot !== entry.k || consent.revokedProperties !== chunk.hidden) return false
  }
  return store.keys.get(entry.k) !== undefined
}
