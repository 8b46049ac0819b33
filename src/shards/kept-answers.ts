// Single-element answers (get-node, get-relation) and whole neighbourhoods
// kept on the front thread, so that a repeated read is answered without a
// message to an actor (a neighbourhood as the bytes written, so it is not
// converted again either). The actor stamps an answer it kept with the
// shard's write counter it observed
// before reading it (workers/store/kept-reads.ts): the answer is true for as
// long as the counter has that value. The front thread reads the same
// counters (the pool made them), so:
// - an answer is kept only if the counter is still its stamp when it arrives,
//   and served only while the counter is still its stamp: a commit raises the
//   counter before any of its writes is answered, so no read sent after a
//   write's answer is served from before it;
// - a consent change is a commit too, but a reading thread may have answered
//   from what it cached of the consent before it dropped it; the pool drops
//   the shard's kept answers once every thread dropped the consent, before
//   the change is answered (forgetShard).
// - an answer is kept only when asked for a second time (wantedAgain): reads
//   that never repeat (a walk over a large graph) fill neither the memory nor
//   the limits, and what is read again gets the room.
// Single machine only: in cluster mode another host may own the shard.
import type { Operation, StreamOp } from '../contract/messages'

/** Answers kept in all, and their characters (bytes for a neighbourhood) in all: past either, the oldest tenth goes. */
export const KEPT_ANSWERS_LIMIT = 32_768
export const KEPT_CHARS_LIMIT = 64 * 1024 * 1024
/** One answer longer than this is not kept (a neighbourhood of degree 1,000 is ~0.75 MB). */
export const KEPT_ANSWER_LIMIT = 4 * 1024 * 1024
/** Keys remembered as asked for once (wantedAgain); past this many they are forgotten at once. */
export const ASKED_ONCE_LIMIT = 32_768
/**
 * Bytes the neighbourhoods being gathered to be kept (one stream per key)
 * may hold in all: a burst of readers of new answers, or readers who stop
 * reading, hold no more than this besides what is kept.
 */
export const GATHERING_LIMIT = 16 * 1024 * 1024

/** A single answer's text, or a neighbourhood's bytes. */
export type KeptBody = string | Uint8Array

interface Kept {
  shard: number
  stamp: number
  /** The shard's forget count when kept (forgetShard). */
  forgets: number
  body: KeptBody
}

export class KeptAnswers {
  private readonly entries = new Map<string, Kept>()
  private chars = 0
  /** By shard: how many times forgetShard dropped its answers; an answer kept before the last one is not served. */
  private readonly forgets: Uint32Array
  /** Keys asked for once and not kept since. */
  private readonly askedOnce = new Set<string>()
  /** Neighbourhoods a stream is gathering to keep: bytes gathered so far, by key. */
  private readonly gathering = new Map<string, number>()
  private gatheredBytes = 0

  constructor(private readonly writeGenerations: Int32Array) {
    this.forgets = new Uint32Array(writeGenerations.length)
  }

  /**
   * The key of an answer that may be kept, or undefined for any other
   * operation. Keys are the parts' lengths, then the parts: no two lists of
   * parts share a key, whatever the parts hold (the last part's length is
   * implied), and a template costs about half a JSON.stringify, which
   * escapes (once per get-node).
   */
  static keyOf(operation: Operation): string | undefined {
    if (operation.op === 'getNode') {
      const { tenant, node: { ns, type, id } } = operation
      return `${tenant.length},${ns.length},${type.length}:${tenant}${ns}${type}${id}`
    }
    if (operation.op === 'getRelation') {
      const { tenant, relation: { from, to, rel } } = operation
      return `r${tenant.length},${from.ns.length},${from.type.length},${from.id.length},${to.ns.length},${to.type.length},${to.id.length},${rel.ns.length},${rel.type.length}:` +
        `${tenant}${from.ns}${from.type}${from.id}${to.ns}${to.type}${to.id}${rel.ns}${rel.type}${rel.id}`
    }
    return undefined
  }

  /** The key of a neighbours answer in its format; undefined for any other stream. */
  static streamKeyOf(operation: StreamOp): string | undefined {
    if (operation.op !== 'neighbours') return undefined
    const { format, tenant, node: { ns, type, id } } = operation
    return `n${format.length},${tenant.length},${ns.length},${type.length}:${format}${tenant}${ns}${type}${id}`
  }

  /** The kept answer, while the shard's counter is still its stamp. */
  find(shard: number, key: string): KeptBody | undefined {
    const kept = this.entries.get(key)
    if (kept === undefined) return undefined
    if (kept.shard === shard && Atomics.load(this.writeGenerations, shard) === kept.stamp && this.forgets[shard] === kept.forgets) return kept.body
    this.drop(key, kept)
    // It was kept, so it is read again: its next answer is wanted at once.
    this.askedOnce.add(key)
    return undefined
  }

  /** After a miss: whether to keep the answer now asked for, which is only when it was asked for before. */
  wantedAgain(key: string): boolean {
    if (this.askedOnce.delete(key)) return true
    if (this.askedOnce.size >= ASKED_ONCE_LIMIT) this.askedOnce.clear()
    this.askedOnce.add(key)
    return false
  }

  /** Whether a stream may gather the neighbourhood `key` to keep it: one stream of a key at a time. */
  startGathering(key: string): boolean {
    if (this.gathering.has(key)) return false
    this.gathering.set(key, 0)
    return true
  }

  /** Counts `bytes` more gathered for `key`; past KEPT_ANSWER_LIMIT, or GATHERING_LIMIT in all, the gathering ends (false). */
  gather(key: string, bytes: number): boolean {
    const sofar = this.gathering.get(key)
    if (sofar === undefined) return false
    if (sofar + bytes > KEPT_ANSWER_LIMIT || this.gatheredBytes + bytes > GATHERING_LIMIT) {
      this.stopGathering(key)
      return false
    }
    this.gathering.set(key, sofar + bytes)
    this.gatheredBytes += bytes
    return true
  }

  stopGathering(key: string): void {
    const sofar = this.gathering.get(key)
    if (sofar === undefined) return
    this.gathering.delete(key)
    this.gatheredBytes -= sofar
  }

  /** Keeps an answer the actor stamped, if the shard's counter has not moved since. */
  keep(shard: number, key: string, body: KeptBody, stamp: number): void {
    if (Atomics.load(this.writeGenerations, shard) !== stamp || body.length > KEPT_ANSWER_LIMIT) return
    const replaced = this.entries.get(key)
    if (replaced !== undefined) this.drop(key, replaced)
    if (this.entries.size >= KEPT_ANSWERS_LIMIT || this.chars + body.length > KEPT_CHARS_LIMIT) this.evictOldest(body.length)
    this.entries.set(key, { shard, stamp, forgets: this.forgets[shard]!, body })
    this.chars += body.length
  }

  /** Drops every kept answer of the shard: in one step, so a consent change does not walk every answer kept (they go when next looked up, or as the oldest). */
  forgetShard(shard: number): void {
    this.forgets[shard]!++
  }

  forgetAll(): void {
    this.entries.clear()
    this.askedOnce.clear()
    this.chars = 0
  }

  get size(): number {
    return this.entries.size
  }

  /** Drops the oldest answers (a Map iterates in insertion order) until a tenth of each limit is free besides `room`, in one pass. */
  private evictOldest(room: number): void {
    const count = Math.floor(KEPT_ANSWERS_LIMIT * 0.9)
    const chars = KEPT_CHARS_LIMIT * 0.9 - room
    for (const [key, kept] of this.entries) {
      if (this.entries.size <= count && this.chars <= chars) break
      this.drop(key, kept)
    }
  }

  private drop(key: string, kept: Kept): void {
    this.entries.delete(key)
    this.chars -= kept.body.length
  }
}
