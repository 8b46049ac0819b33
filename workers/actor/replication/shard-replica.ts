// One shard in cluster mode, on one host (docs/cluster.md, "Leases and
// replication"): its lease in the lease bucket and its replicated stream.
//
// - Standby: follows the stream into LMDB (apply.ts), each entry committed
//   with its sequence. The lease is free when nobody holds it, or when the
//   holder's revision has not changed for a full lease period by this host's
//   monotonic clock. It claims a free lease when the shard prefers this host
//   (src/replication/placement.ts), or when the lease has stayed free a further
//   lease period, and only after applying up to the stream's last sequence.
// - Claiming: after the compare-and-set on the lease, it appends a claim entry
//   expecting the last sequence it applied; that moves the stream on, so any
//   append of the former owner fails from then on (fencing). Then it serves.
// - Owner: renews the lease by compare-and-set every third of a period and
//   serves only while the last renewal, timed from before it was sent, is
//   younger than LEASE_TRUST of a period. Each batch is appended with the
//   expected last sequence before LMDB commits it (replicated-commit.ts).
//   A refused append (fenced) or a lost renewal drops the shard back to standby.
//   When the shard prefers another live host, the owner hands it over: it
//   stops serving, finishes the batch under way and deletes its lease, which
//   frees it at once for the preferred host (also on a clean shutdown).
// - Snapshots (snapshots.ts): the owner takes one on its beat when due and
//   purges the stream below the oldest kept; a standby whose applied
//   sequence the stream no longer continues (or that has nothing yet)
//   restores one before it follows, and one that meets a gap while
//   following (a purge passed it) starts over from there.
import type { KV } from '@nats-io/kv'
import type { ConsumerMessages } from '@nats-io/jetstream'
import { shardLeaseKey, type LeaseValue } from '../../../src/contract/cluster-names'
import { flushOfQueuedWrites } from '../../../src/contract/commit-flush'
import { parseLease } from '../../../src/replication/lease-map'
import { forgetUncommitted, type ShardStore } from '../../store/shard-store'
import { ShardUnavailable } from '../../store/unavailable'
import { applyEntry, appliedSequence, grantErased, grantsToErase, type Applied } from './apply'
import { decodeEntry, encodeEntry, type StreamEntry } from './effects-wire'
import type { Effect, Recorder } from './recorder'
import { rewrapUnderCurrentKek } from './rewrap'
import { Fenced, type ShardLog } from './shard-log'
import type { ShardSnapshots } from './snapshots'

/** A standby's tail met an entry after a missing one: the stream was purged past what it applied. */
class StreamGap extends Error {}

/** A batch's entries: each new key a grant message of its own (so that it can be erased), then the rest of the batch, if any. */
function entriesOf(effects: readonly Effect[], node: string, epoch: number): StreamEntry[] {
  const entries: StreamEntry[] = []
  const rest: Effect[] = []
  for (const e of effects) {
    if ('slot' in e) entries.push({ node, epoch, grant: { slot: e.slot, wrapped: e.wrapped } })
    else rest.push(e)
  }
  if (rest.length > 0) entries.push({ node, epoch, effects: rest })
  return entries
}

const ERASE_RETRY_MS = 5000
/** Keys re-wrapped per write during a KEK rotation (each one grant message): the shard's other writes queue behind one batch at most. */
const REWRAP_BATCH = 200

/** The part of a lease period an owner trusts its last renewal for: the rest is margin for the successor's clock and poll. */
export const LEASE_TRUST = 0.8

export interface ReplicaHost {
  kv: KV
  nodeId: string
  url: string
  leaseMs: number
  now: () => number
  /** Told whenever this host starts or stops serving the shard. */
  ownership(shard: number, owned: boolean, epoch: number): void
  /** Destroys key slots of consents revoked by applied entries, once durable (shred log first). */
  destroyKeys(store: ShardStore, slots: number[]): void
  warn(message: string, err?: unknown): void
  info(message: string): void
}

/**
 * resyncing: the lease is still held and renewed, but an append's outcome is
 * unknown (or LMDB did not commit an appended batch): the shard is not served
 * until this host has followed the stream to its end and appended a new
 * claim entry.
 */
type State = 'standby' | 'claiming' | 'serving' | 'resyncing' | 'releasing'

/** An entry and the stream sequence it was appended at. */
interface Appended { entry: StreamEntry; sequence: number }

/** What the actor tells each replica on a beat. */
export interface Beat {
  /** The shard prefers this host among the live ones: claim a free lease at once. */
  preferredHere: boolean
  /** Another live host is preferred and has been live a full lease period: hand the shard over. */
  handOver: boolean
}

export class ShardReplica {
  private state: State = 'standby'
  /** The last sequence committed to this shard's LMDB. */
  private applied: number
  private held: { value: LeaseValue; revision: number } | undefined
  private validUntil = 0
  /** The lease as last read, and when its revision was first seen here. */
  private seen = { revision: -1, at: 0, value: undefined as LeaseValue | undefined, present: false }
  private tail: ConsumerMessages | undefined
  private tailDone: Promise<void> = Promise.resolve()
  /** Standby applies queued, in order. */
  private applying: Promise<void> = Promise.resolve()
  /** One write batch at a time: each append expects the previous one's sequence. */
  private queue: Promise<unknown> = Promise.resolve()
  private busy = false
  /** Grant messages wait to be erased from the stream (apply.ts records which); the owner erases them. */
  private erasePending = false
  private eraseQueued = false
  /** After a failed erasure, the beat tries again from then on (an attempt holds the write queue up to its timeout). */
  private eraseRetryAt = 0

  /** Set while follow() is starting a tail (and maybe restoring a snapshot first): one at a time. */
  private startingTail = false

  constructor(readonly store: ShardStore, private readonly log: ShardLog, private readonly recorder: Recorder, private readonly host: ReplicaHost, private readonly snapshots?: ShardSnapshots) {
    this.applied = appliedSequence(store)
  }

  get shard(): number {
    return this.store.shard
  }

  serves(): boolean {
    return this.state === 'serving' && this.host.now() < this.validUntil
  }

  async start(): Promise<void> {
    await this.follow()
  }

  /** Called often (a few times a second): renews, notices expiry, claims or hands over. Never runs twice at once. */
  async beat(b: Beat): Promise<void> {
    if ((this.state === 'serving' || this.state === 'resyncing') && this.host.now() >= this.validUntil) this.lose('its lease ran out before a renewal came back')
    if (this.busy) return
    this.busy = true
    try {
      if (this.held !== undefined) {
        // Not a shard just claimed: a dead preferred host still looks live for up to a lease period.
        if (this.state === 'serving' && b.handOver && this.host.now() - this.claimedAt >= 2 * this.host.leaseMs) await this.release('the shard prefers another live host')
        else {
          if (this.host.now() >= this.renewDue) await this.renew()
          if (this.state === 'resyncing') await this.rejoin()
          if (this.state === 'serving' && this.erasePending && !this.eraseQueued && this.host.now() >= this.eraseRetryAt) this.maintain()
          if (this.serves()) this.snapshots?.tick(this.applied, this.held?.value.epoch ?? 0, () => this.serves())
        }
      } else await this.watchOrClaim(b.preferredHere)
    } catch (err) {
      this.host.warn(`cluster: shard ${this.shard}: the lease beat failed`, err)
    } finally {
      this.busy = false
    }
  }

  private renewDue = 0
  private claimedAt = 0

  private async renew(): Promise<void> {
    const held = this.held!
    const started = this.host.now()
    try {
      const revision = await this.host.kv.update(shardLeaseKey(this.shard), JSON.stringify(held.value), held.revision)
      if (this.held !== held) return
      this.held = { value: held.value, revision }
      this.validUntil = started + LEASE_TRUST * this.host.leaseMs
      this.renewDue = started + this.host.leaseMs / 3
    } catch (err) {
      if (/wrong last sequence/i.test(String(err))) this.lose('another host wrote its lease')
      else throw err
    }
  }

  private async watchOrClaim(preferredHere: boolean): Promise<void> {
    const started = this.host.now()
    const entry = await this.host.kv.get(shardLeaseKey(this.shard))
    const revision = entry?.revision ?? 0
    const present = entry !== null && entry.operation === 'PUT'
    if (revision !== this.seen.revision) this.seen = { revision, at: started, value: present ? parseLease(entry!.string()) : undefined, present }
    // Free since: when it was seen deleted or absent, or when the holder's last renewal ran out.
    const freeSince = !this.seen.present || this.seen.value === undefined ? this.seen.at : this.seen.at + this.host.leaseMs
    const freeFor = started - freeSince
    // A deleted lease (a hand-over) waits a lease period for its preferred host; an expired one (its holder stopped) is anyone's.
    const expired = this.seen.present && this.seen.value !== undefined
    if (freeFor < 0 || (!preferredHere && !expired && freeFor < this.host.leaseMs)) return
    await this.claim(entry === null ? undefined : revision)
  }

  /** Catches up with the stream, takes the lease by compare-and-set, appends the claim entry, then serves. */
  private async claim(revision: number | undefined): Promise<void> {
    const last = await this.log.lastSequence()
    await this.applying
    if (this.applied < last) return // not caught up yet: the next beat tries again
    const epoch = (this.seen.value?.epoch ?? 0) + 1
    const value: LeaseValue = { node: this.host.nodeId, url: this.host.url, epoch }
    const started = this.host.now()
    const key = shardLeaseKey(this.shard)
    const newRevision = revision === undefined ? await this.host.kv.create(key, JSON.stringify(value)) : await this.host.kv.update(key, JSON.stringify(value), revision)
    this.held = { value, revision: newRevision }
    this.validUntil = started + LEASE_TRUST * this.host.leaseMs
    this.renewDue = started + this.host.leaseMs / 3
    this.state = 'claiming'
    this.claimedAt = started
    await this.enter(value, 'a former owner appended after it caught up')
  }

  /** Resyncing under a lease still held: once caught up with the stream, a new claim entry, then serve again. */
  private async rejoin(): Promise<void> {
    const last = await this.log.lastSequence()
    await this.applying
    if (this.applied < last || this.state !== 'resyncing' || this.held === undefined) return
    this.state = 'claiming'
    await this.enter(this.held.value, 'another host appended while it held the lease')
  }

  /** Stops following, appends the claim entry expecting what was applied (the stream moves past what any former owner expects), then serves. */
  private async enter(value: LeaseValue, fencedWhy: string): Promise<void> {
    await this.stopFollowing()
    try {
      await this.commit(await this.appendAll([{ node: this.host.nodeId, epoch: value.epoch, effects: [] }]))
    } catch (err) {
      if (err instanceof Fenced) this.lose(fencedWhy)
      else this.resync(`its claim entry was not appended: ${(err as Error).message}`, false)
      return
    }
    if (this.held?.value !== value || this.state !== 'claiming') return
    // What this actor's caches hold may predate entries it applied as a standby.
    forgetUncommitted(this.store)
    this.state = 'serving'
    this.host.ownership(this.shard, true, value.epoch)
    this.host.info(`cluster: shard ${this.shard}: ${this.host.nodeId} serves it (lease epoch ${value.epoch}, stream sequence ${this.applied})`)
    // Erasures a former owner left (it died, or was fenced, before it erased), and a KEK rotation under way.
    this.erasePending = true
    this.maintain()
  }

  /**
   * The owner's upkeep, as a write of its own (so fenced like any): keys
   * still wrapped by a previous KEK wrapped again (new grant messages), then
   * the grant messages left to erase erased.
   */
  private maintain(): void {
    this.eraseQueued = true
    const rotating = this.store.keys.rotating
    const run = async (): Promise<number> => {
      let total = 0
      for (;;) {
        const rewrapped = await this.write(() => (rotating ? rewrapUnderCurrentKek(this.store, REWRAP_BATCH) : 0), this.recorder.abortSentinel, true)
        total += rewrapped
        if (rewrapped < REWRAP_BATCH) return total
      }
    }
    run()
      .then((rewrapped) => {
        if (rewrapped > 0) this.host.info(`cluster: shard ${this.shard}: re-wrapped ${rewrapped} live data keys under the current KEK`)
        if (rotating) this.host.info(`cluster: shard ${this.shard}: every live data key is wrapped by the current KEK`)
      }, (err: unknown) => this.host.warn(`cluster: shard ${this.shard}: the KEK re-wrap or the grant erasures did not finish (tried again on the next claim)`, err))
      .finally(() => { this.eraseQueued = false })
  }

  /** Stops serving but keeps the lease, and follows the stream to its end (rejoin() serves again). */
  private resync(why: string, wasServing = true): void {
    if (this.state !== 'serving' && this.state !== 'claiming') return
    this.state = 'resyncing'
    this.host.warn(`cluster: shard ${this.shard}: ${this.host.nodeId} stops serving it until it has followed its stream (${why})`)
    if (wasServing) this.host.ownership(this.shard, false, this.held?.value.epoch ?? 0)
    forgetUncommitted(this.store)
    void this.queue.then(() => this.follow(), () => this.follow())
  }

  /** Stops serving, lets the batch under way finish, and deletes the lease so that another host may claim it at once. */
  async release(why: string): Promise<void> {
    const held = this.held
    if (this.state !== 'serving' || held === undefined) return
    this.state = 'releasing'
    this.host.ownership(this.shard, false, held.value.epoch)
    await this.queue
    try {
      await this.host.kv.delete(shardLeaseKey(this.shard), { previousSeq: held.revision })
    } catch (err) {
      this.host.warn(`cluster: shard ${this.shard}: its lease could not be deleted (it runs out instead)`, err)
    }
    this.host.warn(`cluster: shard ${this.shard}: ${this.host.nodeId} handed it over (${why})`)
    this.state = 'standby'
    this.held = undefined
    this.validUntil = 0
    forgetUncommitted(this.store)
    await this.follow()
  }

  /** Stops serving and follows the stream again (the lease, if still ours, runs out; nobody renews it). */
  lose(why: string): void {
    if (this.state === 'standby' || this.state === 'releasing') return
    const epoch = this.held?.value.epoch ?? 0
    const served = this.state === 'serving' || this.state === 'claiming'
    this.state = 'standby'
    this.held = undefined
    this.validUntil = 0
    this.host.warn(`cluster: shard ${this.shard}: ${this.host.nodeId} no longer serves it (${why})`)
    if (served) this.host.ownership(this.shard, false, epoch)
    forgetUncommitted(this.store)
    void this.queue.then(() => this.follow(), () => this.follow())
  }

  /**
   * The owner's write path: `run` is the batch, run in a transaction that is
   * rolled back while its effects are recorded; the effects are appended;
   * then LMDB commits them with the sequence. Rejects with Fenced or another
   * error when nothing was committed. Grant messages the batch left to erase
   * are erased before it resolves; `eraseLeftovers`: also those earlier
   * attempts or a former owner left (not on every write: while erasures
   * fail, each attempt may wait for its timeout).
   */
  write<T>(run: () => T, abort: unknown, eraseLeftovers = false): Promise<T> {
    const next = this.queue.then(async () => {
      if (!this.serves()) throw this.unavailable(`${this.host.nodeId} does not serve shard ${this.shard} now; retry after the lease period`)
      let result!: T
      this.recorder.start()
      let effects: Effect[]
      try {
        this.store.env.transactionSync(() => {
          result = run()
          return abort
        })
      } finally {
        effects = this.recorder.take()
        // The caches saw the batch; LMDB has not yet: reads until the commit come from LMDB.
        forgetUncommitted(this.store)
      }
      let erasures = eraseLeftovers
      if (effects.length > 0) {
        let appended: Appended[]
        try {
          appended = await this.appendAll(entriesOf(effects, this.host.nodeId, this.held!.value.epoch))
        } catch (err) {
          throw await this.appendFailed(err)
        }
        try {
          erasures = (await this.commit(appended)).erasures || erasures
        } catch (err) {
          // In the stream but not here: follow the stream, which brings it.
          this.resync(`LMDB did not commit an appended batch: ${(err as Error).message}`)
          throw err
        }
      }
      // Before the answer: a revocation's 204 comes once its grant message is erased (or its erasure is left to retry).
      if (erasures && this.erasePending) await this.eraseGrants()
      return result
    })
    this.queue = next.catch(() => undefined)
    return next
  }

  /**
   * Fenced: another host owns the stream now; this one stops serving. Any
   * other failure (a full stream, no quorum, a timeout): if the stream did
   * not move, nothing was stored and the shard goes on serving; if it moved
   * or cannot be read, this host follows the stream to learn what it holds.
   */
  private async appendFailed(err: unknown): Promise<ShardUnavailable> {
    const why = (err as Error).message
    if (err instanceof Fenced) this.lose('its append was fenced: another host claimed the shard')
    else {
      const last = await this.log.lastSequence().catch(() => undefined)
      if (last !== this.applied) this.resync(`an append failed and the stream ${last === undefined ? 'cannot be read' : 'moved'}: ${why}`)
      else this.host.warn(`cluster: shard ${this.shard}: an append failed, nothing stored: ${why}`)
    }
    return this.unavailable(`the shard's replicated log did not take the write (${why}); retry after the lease period`)
  }

  /**
   * Appends entries in order, each expecting the one before (the first:
   * what this host applied), so any of them is fenced like a single append.
   * Rejects with the first failure; entries appended before it are in the
   * stream, and appendFailed sees that the stream moved.
   */
  private async appendAll(entries: readonly StreamEntry[]): Promise<Appended[]> {
    const out: Appended[] = []
    let after = this.applied
    for (const entry of entries) {
      const sequence = await this.log.append(encodeEntry(entry), after, `${this.shard}.${after + 1}.${this.host.nodeId}.${entry.epoch}`)
      out.push({ entry, sequence })
      after = sequence
    }
    return out
  }

  /** Erases the grant messages apply.ts left to erase; one that fails stays for the next write or beat. */
  private async eraseGrants(): Promise<void> {
    this.erasePending = false
    for (const sequence of grantsToErase(this.store)) {
      try {
        await this.log.erase(sequence)
        await grantErased(this.store, sequence)
      } catch (err) {
        this.erasePending = true
        this.eraseRetryAt = this.host.now() + ERASE_RETRY_MS
        this.host.warn(`cluster: shard ${this.shard}: the key grant at stream sequence ${sequence} is not erased yet (tried again in ${ERASE_RETRY_MS / 1000} s)`, err)
        return
      }
    }
  }

  private unavailable(message: string): ShardUnavailable {
    return new ShardUnavailable(message, Math.ceil(this.host.leaseMs / 1000))
  }

  /** Commits entries with their sequences (durable when this resolves), then destroys the keys they revoked. */
  private async commit(appended: readonly Appended[]): Promise<Applied> {
    const applied: Applied = { revoked: [], erasures: false }
    const done = this.store.env.transaction(() => { for (const a of appended) applyEntry(this.recorder, a.entry, a.sequence, applied) })
    const flushed = flushOfQueuedWrites(this.store.env)
    await done
    await flushed
    this.applied = appended[appended.length - 1]!.sequence
    if (applied.erasures) this.erasePending = true
    if (applied.revoked.length > 0) this.host.destroyKeys(this.store, applied.revoked)
    return applied
  }

  private async follow(): Promise<void> {
    if ((this.state !== 'standby' && this.state !== 'resyncing') || this.tail !== undefined || this.startingTail) return
    this.startingTail = true
    let tail: ConsumerMessages
    try {
      await this.restoreIfBehind()
      tail = await this.log.follow(this.applied + 1)
    } catch (err) {
      this.host.warn(`cluster: shard ${this.shard}: cannot follow its stream; trying again`, err)
      setTimeout(() => void this.follow(), 1000).unref()
      return
    } finally {
      this.startingTail = false
    }
    if (this.state !== 'standby' && this.state !== 'resyncing') {
      tail.stop()
      return
    }
    this.tail = tail
    this.tailDone = (async () => {
      // Set once an entry of this tail failed to apply: those after it wait for the next follow, which reads it again.
      let broken = false
      for await (const m of tail) {
        const sequence = m.seq
        if (sequence <= this.applied) continue
        const entry = decodeEntry(m.data)
        // Queued in order; lmdb-js commits queued transactions together. A sequence may be skipped
        // (an erased grant message: the ordered consumer never skips any other).
        this.applying = this.applying.then(async () => {
          if (broken || sequence <= this.applied) return
          // A skipped sequence is an erased key grant, or a purge that passed this host (then a snapshot is needed).
          if (sequence > this.applied + 1 && this.snapshots !== undefined && await this.snapshots.passedBy(this.applied)) {
            throw new StreamGap(`entry ${sequence} follows ${this.applied}: the stream was purged past what this host applied`)
          }
          await this.commit([{ entry, sequence }])
        }).catch((err: unknown) => {
          // The entries queued behind a failed one return at once (broken): one warning, one new follow.
          broken = true
          if (this.tail !== tail) return
          if (err instanceof StreamGap) this.host.warn(`cluster: shard ${this.shard}: ${err.message}; restoring a snapshot`)
          else this.host.warn(`cluster: shard ${this.shard}: applying stream entry ${sequence} failed; following again from it`, err)
          void this.stopFollowing().then(() => setTimeout(() => void this.follow(), 1000).unref())
        })
      }
    })().catch((err: unknown) => this.host.warn(`cluster: shard ${this.shard}: following the stream stopped`, err))
  }

  /**
   * Before a tail starts: a snapshot when the stream no longer continues
   * what LMDB holds (snapshots.ts). The sequence is read from LMDB, not
   * memory: a restore cut short left it at 0 there, and must run again.
   */
  private async restoreIfBehind(): Promise<void> {
    if (this.snapshots === undefined) return
    await this.applying
    this.applied = appliedSequence(this.store)
    const restored = await this.snapshots.restoreIfBehind(this.applied)
    this.applied = appliedSequence(this.store)
    if (restored === undefined) return
    if (restored.destroyed.length > 0) this.host.destroyKeys(this.store, restored.destroyed)
  }

  private async stopFollowing(): Promise<void> {
    const tail = this.tail
    this.tail = undefined
    if (tail !== undefined) {
      tail.stop()
      await this.tailDone
    }
    await this.applying
  }

  /** A clean shutdown: the shard is handed over at once rather than left to run out. */
  async close(): Promise<void> {
    await this.release('this host is shutting down').catch(() => undefined)
    this.state = 'standby'
    this.held = undefined
    await this.queue.catch(() => undefined)
    await this.stopFollowing()
  }
}

