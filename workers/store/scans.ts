// The two reads that may return a whole type or neighbourhood: the list GET
// and neighbours. Each is a resumable scan: one step reads a bounded slice
// and remembers the last key, so a stream holds no long read transaction and
// never more than one slice in memory; the next step starts after that key.
import type { Criterion, NodeRef } from '../../src/contract/messages'
import { own } from '../../src/model/own-key'
import { IN, adjacencyPrefix, indexPrefix, nodeIdOf, nodeKey, prefixRange, relationKey, relationOfAdjacency, typePrefix, type Key } from './keys'
import { LOCKED_PLACEHOLDER, closeNodeChunk, nodeChunkHead, nodeObject, relationChunk } from './records'
import { elementChunk, type CacheBudget } from './chunk-cache'
import type { ShardContext } from './context'
import { TENANT_OWNER } from './consents'
import { elementId, openElement } from './sealing'
import { KEPT_CHARS_LIMIT, cachedNeighbourhood, keepNeighbourhood, neighbourhoodChunks, observedWrites, unchangedSince, type Neighbourhood } from './kept-reads'

export interface Slice {
  chunks: string[]
  done: boolean
  /** Set (with done) when a neighbours scan's source node does not exist: the spec's 404, this message. */
  notFound?: string
  /** Set (with done) on a neighbours read no commit was counted during, with no locked element: the answer is true while the shard's write counter is this. */
  kept?: number
}

/** How much one step may read: whichever limit is reached first. */
export const SLICE_ITEMS = 256
export const SLICE_BYTES = 64 * 1024
/**
 * What one neighbours step may read: less than a list's. A hub's answer is
 * the one that runs to megabytes and is read by many at once, and every
 * stream keeps up to STREAM_WINDOW slices in flight (workers/actor/streams.ts),
 * each copied several times between the threads and uWebSockets.js: with
 * 64 KB slices 200 concurrent readers of a 4 MB neighbourhood grew the
 * process by 110-150 MB, with 16 KB by 50-70 MB.
 */
export const NEIGHBOURS_SLICE_BYTES = 16 * 1024
/**
 * Keys one list step may read, returned or not: an owner filter or stale
 * index terms can skip any number of keys, and the actor answers nothing
 * else while a step runs.
 */
export const SLICE_KEYS = 4 * SLICE_ITEMS

export interface Scan {
  step(sc: ShardContext): Slice
}

/**
 * How many elements one scan may add to the decrypted-element cache: enough
 * to keep small neighbourhoods and short lists hot, too few for one large
 * scan to evict what single reads use. A list counts every element it reads;
 * neighbours only those it adds, so repeated reads of a large neighbourhood
 * warm it a little more each time (chunk-cache.ts).
 */
const SCAN_CACHE_BUDGET = 64

/**
 * A neighbourhood read again on this thread (its source among the last
 * RECENT_SOURCES first read) may add up to REPEAT_SCAN_CACHE_BUDGET elements:
 * a hub that clients keep reading is cached whole by its second read, and
 * then kept whole (kept-reads.ts), while a one-off read of a large
 * neighbourhood still adds only SCAN_CACHE_BUDGET.
 */
export const REPEAT_SCAN_CACHE_BUDGET = 4096
const RECENT_SOURCES = 1024
const recentSources = new Set<string>()

/** Forgets which neighbourhoods were read (a test starts from a thread that has read none). */
export function forgetReadSources(): void {
  recentSources.clear()
}

function readBefore(source: string): boolean {
  if (recentSources.has(source)) return true
  if (recentSources.size >= RECENT_SOURCES) recentSources.clear()
  recentSources.add(source)
  return false
}

/** A node that cannot be opened is listed as the spec's locked placeholder. */
export class ListScan implements Scan {
  private lastKey: Key | undefined
  private remaining: number
  /** cache additions this scan may still make */
  private cacheLeft = SCAN_CACHE_BUDGET

  constructor(
    private readonly tenant: string,
    private readonly ns: string,
    private readonly type: string,
    limit: number | undefined,
    private readonly owner: string | undefined,
    private readonly criterion: Criterion | undefined,
  ) {
    this.remaining = limit ?? Number.POSITIVE_INFINITY
  }

  step({ store, urls, blind }: ShardContext): Slice {
    const { tenant, criterion } = this
    const chunks: string[] = []
    let bytes = 0
    const prefix = criterion === undefined
      ? typePrefix(tenant, this.ns, this.type)
      : indexPrefix(tenant, this.ns, this.type, criterion.property, blind.term(tenant, criterion.property, criterion.value))
    const db = criterion === undefined ? store.nodes : store.index
    const opts = { start: this.lastKey ?? prefix, end: prefixRange(prefix).end, exclusiveStart: this.lastKey !== undefined }
    let read = 0
    for (const raw of db.getKeys(opts)) {
      if (this.remaining <= 0) return { chunks, done: true }
      if (chunks.length >= SLICE_ITEMS || bytes >= SLICE_BYTES || read >= SLICE_KEYS) return { chunks, done: false }
      read++
      const key = raw as Key
      this.lastKey = key
      const node: NodeRef = { ns: this.ns, type: this.type, id: nodeIdOf(key) }
      const nk = nodeKey(tenant, node)
      const stored = store.nodes.get(nk)
      if (stored === undefined) continue
      if (this.owner !== undefined && stored.o !== this.owner && stored.o !== TENANT_OWNER) continue
      const opened = openElement(store, tenant, nk, stored, true, this.cacheLeft-- > 0)
      let json: string
      if (opened.kind !== 'open') {
        // Under a criterion a hit that cannot be opened is left out: its index
        // term outlives the revoked (or locked) data, and listing it would
        // confirm a guess of the crypto-shredded value.
        if (criterion !== undefined) continue
        json = LOCKED_PLACEHOLDER
      } else {
        // An index entry can outlive the data it was made from (when that data
        // became undecryptable); only a hit whose current value matches counts.
        if (criterion !== undefined && own(JSON.parse(opened.record.p) as Record<string, unknown>, criterion.property) !== criterion.value) continue
        json = nodeObject(urls, tenant, node, opened.record)
      }
      chunks.push(json)
      bytes += json.length
      this.remaining--
    }
    return { chunks, done: true }
  }
}

/**
 * Source node first, then each neighbour once with every relation joining it
 * to the source. Elements that cannot be opened keep identity, timestamps and
 * owner, with `locked: true` and empty properties (spec 1.8).
 */
export class NeighboursScan implements Scan {
  private lastKey: Key | undefined
  private sentSource = false
  /** cache additions this scan may still make */
  private readonly budget: CacheBudget = { left: SCAN_CACHE_BUDGET, allKept: true, allOpen: true }
  /** What is read, to be kept once read entirely (kept-reads.ts); dropped past KEPT_CHARS_LIMIT. */
  private whole: { key: string; pieces: Neighbourhood; chars: number } | undefined
  /** The shard's write counter this thread observed when the read began. */
  private observed: number | undefined

  constructor(private readonly tenant: string, private readonly source: NodeRef) {}

  private head({ store, urls }: ShardContext, n: NodeRef): string | undefined {
    return elementChunk(store, store.nodes, this.tenant, nodeKey(this.tenant, n), this.budget, (r, p) => nodeChunkHead(urls, this.tenant, n, r, p))
  }

  step(sc: ShardContext): Slice {
    const { store, urls } = sc
    const { tenant, source } = this
    const chunks: string[] = []
    let bytes = 0
    const firstStep = !this.sentSource
    if (firstStep) {
      // A kept neighbourhood goes whole, in this message: nothing can change under it while it is sent.
      const key = elementId(nodeKey(tenant, source))
      const kept = cachedNeighbourhood(store.shard, key)
      if (kept !== undefined) return { chunks: neighbourhoodChunks(kept, closeNodeChunk), done: true, kept: observedWrites(store.shard) }
      if (readBefore(key)) this.budget.left = REPEAT_SCAN_CACHE_BUDGET
      // The source is read once, for its chunk: its absence is the 404 (the stream has sent nothing yet).
      const head = this.head(sc, source)
      if (head === undefined) return { chunks, done: true, notFound: `node ${source.ns}/${source.type}/${source.id} not found` }
      chunks.push(closeNodeChunk(head, undefined))
      this.sentSource = true
      const observed = observedWrites(store.shard)
      this.observed = observed
      if (observed !== undefined) this.whole = { key, pieces: { source: head, neighbours: [] }, chars: head.length }
    }
    const prefix = adjacencyPrefix(tenant, source)
    let group: { neighbour: NodeRef; relations: string[]; lastKey: Key } | undefined
    const flush = (): void => {
      if (group === undefined) return
      const head = this.head(sc, group.neighbour)
      if (head !== undefined) {
        const json = closeNodeChunk(head, group.relations)
        chunks.push(json)
        bytes += json.length
        this.remember(head, group.relations, json.length)
      }
      this.lastKey = group.lastKey
      group = undefined
    }
    const opts = { start: this.lastKey ?? prefix, end: prefixRange(prefix).end, exclusiveStart: this.lastKey !== undefined }
    for (const raw of store.adjacency.getKeys(opts)) {
      const key = raw as Key
      const { neighbour, relation, direction } = relationOfAdjacency(key)
      const sameNeighbour = group !== undefined && group.neighbour.ns === neighbour.ns && group.neighbour.type === neighbour.type && group.neighbour.id === neighbour.id
      if (!sameNeighbour) {
        flush()
        // Stop only between neighbours, so one neighbour's relations are never split.
        if (chunks.length >= SLICE_ITEMS || bytes >= NEIGHBOURS_SLICE_BYTES) return { chunks, done: false }
        group = { neighbour, relations: [], lastKey: key }
      }
      const g = group as NonNullable<typeof group>
      g.lastKey = key
      // A relation from the source to itself is listed under both directions; show it once.
      const selfLoop = neighbour.ns === source.ns && neighbour.type === source.type && neighbour.id === source.id
      if (selfLoop && direction === IN) continue
      const json = elementChunk(store, store.relations, tenant, relationKey(tenant, relation), this.budget, (r, p) => relationChunk(urls, tenant, relation, r, p))
      if (json !== undefined) g.relations.push(json)
    }
    flush()
    const { whole, observed } = this
    if (observed === undefined) return { chunks, done: true }
    if (whole !== undefined && this.budget.allKept) keepNeighbourhood(store.shard, whole.key, whole.pieces, observed)
    // No commit was counted since the read began, so its slices are one answer true at that count: the last
    // one says so, and the front thread may keep the answer (src/shards/kept-answers.ts), whether or not this thread did.
    if (this.budget.allOpen && unchangedSince(store.shard, observed)) return { chunks, done: true, kept: observed }
    return { chunks, done: true }
  }

  private remember(head: string, relations: string[], chars: number): void {
    const whole = this.whole
    if (whole === undefined) return
    whole.chars += chars
    if (whole.chars > KEPT_CHARS_LIMIT) this.whole = undefined
    else whole.pieces.neighbours.push({ head, relations })
  }
}
