// Whole neighbourhoods kept in memory per thread, for as long as their shard
// is not written. A neighbours read that fits in one slice is kept as the
// pieces it was joined from: the source's chunk and each neighbour's head
// and relation chunks, all of them strings the decrypted-element cache holds
// (chunk-cache.ts), so an entry costs a few pointers. Served again only while
// the shard's write counter (write-generations.ts) is what it was when the
// read ran: then nothing on disk changed (no element, consent or key slot),
// and the read costs no LMDB read, comparison or consent check at all.
//
// Validity, step by step: the actor observes the counters at the start of
// each message, before it renews its read snapshots (workers/shard-actor.ts),
// so a read in that message sees at least every commit counted up to then;
// an entry is stamped with that observed value and used only in a message
// that observed the same value. A commit raises the counter before its
// writes are answered, so no acknowledged write is ever hidden by an entry.
//
// Memory: entries of a shard are dropped as soon as a message observes its
// counter moved; all of them when the element cache evicts (their pieces
// would no longer be shared), when a consent changes (consents.ts) and when a
// transaction fails or the shard closes.
import { writeGeneration } from './write-generations'

export interface NeighbourPieces {
  /** the neighbour's chunk up to its relations (records.ts: nodeChunkHead) */
  head: string
  relations: string[]
}

export interface Neighbourhood {
  source: string
  neighbours: NeighbourPieces[]
}

/** Entries one thread keeps, over all its shards. */
export const NEIGHBOURHOOD_LIMIT = 16_384

interface ShardEntries {
  /** the shard's write counter as this thread last observed it */
  observed: number
  entries: Map<string, Neighbourhood>
}

const shards = new Map<number, ShardEntries>()
let size = 0

/** At the start of a message, before read snapshots are renewed: drops what a commit since made stale. */
export function observeWrites(shardNumbers: Iterable<number>): void {
  for (const shard of shardNumbers) {
    const generation = writeGeneration(shard)
    const known = shards.get(shard)
    if (known === undefined) shards.set(shard, { observed: generation, entries: new Map() })
    else if (known.observed !== generation) {
      size -= known.entries.size
      known.entries.clear()
      known.observed = generation
    }
  }
}

export function cachedNeighbourhood(shard: number, key: string): Neighbourhood | undefined {
  return shards.get(shard)?.entries.get(key)
}

/** Keeps a neighbourhood read in this message (after observeWrites of its shard). */
export function keepNeighbourhood(shard: number, key: string, neighbourhood: Neighbourhood): void {
  const known = shards.get(shard)
  if (known === undefined) return
  if (size >= NEIGHBOURHOOD_LIMIT) forgetNeighbourhoods()
  const before = known.entries.size
  known.entries.set(key, neighbourhood)
  size += known.entries.size - before
}

/** Drops every entry of `shard`, or of every shard. */
export function forgetNeighbourhoods(shard?: number): void {
  for (const [number, known] of shards) {
    if (shard !== undefined && number !== shard) continue
    size -= known.entries.size
    known.entries.clear()
  }
}

/** The chunks the read sends, in its order: the source, then each neighbour with its relations. */
export function neighbourhoodChunks(n: Neighbourhood, close: (head: string, relations: string[] | undefined) => string): string[] {
  const chunks = [close(n.source, undefined)]
  for (const { head, relations } of n.neighbours) chunks.push(close(head, relations))
  return chunks
}
