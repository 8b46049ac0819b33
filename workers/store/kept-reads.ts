// Whole reads kept in memory per thread, for as long as their shard is not
// written: neighbourhoods and single-element answers (get-node,
// get-relation). Served again only while the shard's write counter
// (write-generations.ts) is what it was when the read ran: then nothing on
// disk changed (no element, consent or key slot), and the read costs no LMDB
// read, comparison or consent check at all.
//
// A neighbours read (of up to KEPT_CHARS_LIMIT) is kept as the pieces it was
// joined from: the source's chunk and each neighbour's head and relation
// chunks, all of them strings the decrypted-element cache holds
// (chunk-cache.ts), so an entry costs a few pointers. A single answer is kept
// as its text (a few hundred bytes; ANSWER_LIMIT of them per thread).
//
// Validity, step by step: the actor observes the counters at the start of
// each message, before it renews its read snapshots (workers/shard-actor.ts),
// so a read in that message sees at least every commit counted up to then;
// an entry is stamped with that observed value and used only in a message
// that observed the same value. A commit raises the counter before its
// writes are answered, so no acknowledged write is ever hidden by an entry.
//
// A kept neighbourhood is sent as one slice, all in the message that found it,
// so a write or revocation can never land in the middle of serving one.
//
// Memory: entries of a shard are dropped as soon as a message observes its
// counter moved; all of them when the element cache evicts (the pieces of
// neighbourhoods would no longer be shared), when a consent changes
// (consents.ts) and when a transaction fails or the shard closes; all single
// answers when ANSWER_LIMIT is reached.
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
/** Single-element answers one thread keeps, over all its shards (each ~0.3-1 KB). */
export const ANSWER_LIMIT = 8_192
/** Pieces (pointers) one thread's entries hold in all: a degree-1,000 neighbourhood holds ~2,000. */
export const PIECE_LIMIT = 400_000
/** A neighbourhood whose answer is longer is not kept: a hit is sent as one slice. */
export const KEPT_CHARS_LIMIT = 1024 * 1024

interface ShardEntries {
  /** the shard's write counter as this thread last observed it */
  observed: number
  entries: Map<string, Neighbourhood>
  /** pieces its entries hold (counted when kept, so a drop need not walk them) */
  pieces: number
  /** single-element answers (get-node, get-relation), whole: their own strings */
  answers: Map<string, string>
}

const shards = new Map<number, ShardEntries>()
let size = 0
let pieces = 0
let answerCount = 0

const piecesOf = (n: Neighbourhood): number => n.neighbours.reduce((sum, { relations }) => sum + 1 + relations.length, 1)

/** At the start of a message, before read snapshots are renewed: drops what a commit since made stale. */
export function observeWrites(shardNumbers: Iterable<number>): void {
  for (const shard of shardNumbers) {
    const generation = writeGeneration(shard)
    const known = shards.get(shard)
    if (known === undefined) shards.set(shard, { observed: generation, entries: new Map(), pieces: 0, answers: new Map() })
    else if (known.observed !== generation) {
      drop(known)
      known.observed = generation
    }
  }
}

function drop(known: ShardEntries): void {
  size -= known.entries.size
  pieces -= known.pieces
  answerCount -= known.answers.size
  known.entries.clear()
  known.answers.clear()
  known.pieces = 0
}

/** The write counter this thread observed for `shard` at the start of the current message (undefined: not observed). */
export function observedWrites(shard: number): number | undefined {
  return shards.get(shard)?.observed
}

export function cachedNeighbourhood(shard: number, key: string): Neighbourhood | undefined {
  return shards.get(shard)?.entries.get(key)
}

/**
 * The shard's entries, if a read after this thread observed `observed` for
 * it may be kept: only while that is still the counter, both as this thread
 * last observed it and as it is now (a read over several steps spans turns
 * in which a commit may have been counted).
 */
function entriesStillAt(shard: number, observed: number | undefined): ShardEntries | undefined {
  const known = shards.get(shard)
  if (known === undefined || observed === undefined || known.observed !== observed || writeGeneration(shard) !== observed) return undefined
  return known
}

/** Whether no commit to `shard` was counted since this thread observed `observed` (a read begun then still shows the shard as it is). */
export function unchangedSince(shard: number, observed: number): boolean {
  return entriesStillAt(shard, observed) !== undefined
}

/** Keeps a neighbourhood read entirely after this thread observed `observed` for its shard (entriesStillAt); whether it was kept. */
export function keepNeighbourhood(shard: number, key: string, neighbourhood: Neighbourhood, observed: number): boolean {
  const known = entriesStillAt(shard, observed)
  if (known === undefined) return false
  const added = piecesOf(neighbourhood)
  if (size >= NEIGHBOURHOOD_LIMIT || pieces + added > PIECE_LIMIT) forgetKeptReads()
  const replaced = known.entries.get(key)
  if (replaced !== undefined) {
    size--
    const removed = piecesOf(replaced)
    pieces -= removed
    known.pieces -= removed
  }
  known.entries.set(key, neighbourhood)
  size++
  pieces += added
  known.pieces += added
  return true
}

/** A single-element answer kept of `shard` while it is not written. */
export function keptAnswer(shard: number, id: string): string | undefined {
  return shards.get(shard)?.answers.get(id)
}

/**
 * Keeps a single-element answer read after this thread observed `observed`
 * for its shard (entriesStillAt); whether it was kept (the answer is then
 * true for as long as the counter stays `observed`).
 */
export function keepAnswer(shard: number, id: string, answer: string, observed: number | undefined): boolean {
  const known = entriesStillAt(shard, observed)
  if (known === undefined) return false
  if (answerCount >= ANSWER_LIMIT) {
    for (const k of shards.values()) {
      answerCount -= k.answers.size
      k.answers.clear()
    }
  }
  if (!known.answers.has(id)) answerCount++
  known.answers.set(id, answer)
  return true
}

/** Drops every entry of `shard`, or of every shard. */
export function forgetKeptReads(shard?: number): void {
  for (const [number, known] of shards) {
    if (shard !== undefined && number !== shard) continue
    drop(known)
  }
}

/** The chunks the read sends, in its order: the source, then each neighbour with its relations. */
export function neighbourhoodChunks(n: Neighbourhood, close: (head: string, relations: string[] | undefined) => string): string[] {
  const chunks = [close(n.source, undefined)]
  for (const { head, relations } of n.neighbours) chunks.push(close(head, relations))
  return chunks
}
