// One replicated unit in cluster mode, on one host (docs/design/replication.md, "Leases
// and replication"): a graph shard (workers/actor/replication/shard-replica.ts)
// or the auth store (src/cluster/auth-replica.ts), with its lease in the
// lease bucket and its replicated stream.
//
// - Standby: follows the stream into LMDB (the unit's apply), each entry
//   committed with its sequence. The lease is free when nobody holds it, or
//   when the holder's revision has not changed for a full lease period by this
//   host's monotonic clock. It claims a free lease when the unit prefers this
//   host (src/replication/placement.ts), or when the lease has stayed free a
//   further lease period, and only after applying up to the stream's last
//   sequence.
// - Claiming: after the compare-and-set on the lease, it appends a claim entry
//   expecting the last sequence it applied; that moves the stream on, so any
//   append of the former owner fails from then on (fencing). Then it serves.
// - Owner: renews the lease by compare-and-set every third of a period and
//   serves only while the last renewal, timed from before it was sent, is
//   younger than LEASE_TRUST of a period. Each batch is appended with the
//   expected last sequence before LMDB commits it.
//   A refused append (fenced) or a lost renewal drops the unit back to standby.
//   When the unit prefers another live host, and that host's follow report
//   says it has nearly caught up with the stream (catch-up.ts), the owner
//   hands it over: it stops serving, finishes the batches queued and writes
//   its lease as handed to that host, which claims it at its next beat (a
//   clean shutdown does the same without waiting for a report).
//
// What only a shard does (key grants and their erasure, the KEK re-wrap,
// snapshots) is its subclass's (workers/actor/replication/shard-replica.ts),
// through the hooks below: how a batch becomes stream entries
// (ReplicatedUnit.entries), what follows a claim, a beat and a write, what
// comes before a tail, and whether a hole in the stream was a purge.
import type { KV } from '@nats-io/kv'
import type { ConsumerMessages } from '@nats-io/jetstream'
import type { RootDatabase } from 'lmdb'
import type { LeaseValue } from '../contract/cluster-names'
import type { ClusterDurability } from '../config/cluster-options'
import { flushOfQueuedWrites } from '../contract/commit-flush'
import { parseLease } from './lease-map'
import { decodeEntry, encodeEntry, type Effect, type StreamEntry } from './effects'
import { Fenced, type StreamLog } from './stream-log'
import { OwnerTrail, parseFollowReport, type FollowReport } from './catch-up'
import { withTimeout } from './with-timeout'

/** The part of a lease period an owner trusts its last renewal for: the rest is margin for the successor's clock and poll. */
export const LEASE_TRUST = 0.8

/** Stream entries a standby applies in one transaction at most. */
const FOLLOW_BATCH = 1000

/** What is replicated: a store with its lease key, its applied sequence, its recorder and its apply. */
export interface ReplicatedUnit {
  /** In log lines: "shard 3", "the auth store". */
  readonly name: string
  /** The first part of every append's message id: the shard's number, "auth". */
  readonly id: string
  readonly leaseKey: string
  /** The transactions batches run and commit in (the auth store's raw ones, not those its recorder hands to the batches). */
  readonly env: Pick<RootDatabase, 'transaction' | 'transactionSync' | 'flushed'>
  /** Notes every write of a batch run between start() and take(). */
  readonly recorder: { start(): void; take(): Effect[] }
  /** The last stream sequence the unit's LMDB holds (0: none). */
  appliedSequence(): number
  /** Inside a write transaction: the entries, each with its sequence. Returns what to do once that commit is durable, if anything. */
  apply(appended: readonly Appended[]): (() => void) | undefined
  /** Forgets cached reads that may hold a rolled-back batch's values or predate applied entries. */
  forget(): void
  /** Where `node` reports how far it has followed this unit's stream (catch-up.ts); without one, hand-overs do not wait for reports. */
  followKey?(node: string): string
  /** What the claim entry of an empty stream carries (the auth store's snapshot of what it held before); none when absent. */
  snapshot?(): Effect[]
  /** The stream entries a batch's effects become, appended in turn (default: one entry; a shard's new keys are grant messages of their own). */
  entries?(effects: Effect[], node: string, epoch: number): StreamEntry[]
}

/** An entry and the stream sequence it was appended at. */
export interface Appended { entry: StreamEntry; sequence: number }

/** A tail met an entry after a missing one that was not a hole the unit expects: the stream was purged past what this host applied. */
export class StreamGap extends Error {}

export interface UnitHost {
  kv: KV
  nodeId: string
  url: string
  leaseMs: number
  /** When an owner's write is answered: after LMDB's sync (local) or once LMDB committed it (quorum). */
  durability: ClusterDurability
  now: () => number
  /** Told whenever this host starts or stops serving the unit. */
  ownership(owned: boolean, epoch: number): void
  /** The error a write refused for want of a valid lease rejects with (a 503 with Retry-After of `retryAfter` seconds; `notRun`: refused before any of it ran). */
  unavailable(message: string, retryAfter: number, notRun?: boolean): Error
  warn(message: string, err?: unknown): void
  info(message: string): void
}

/**
 * resyncing: the lease is still held and renewed, but an append's outcome is
 * unknown (or LMDB did not commit an appended batch): the unit is not served
 * until this host has followed the stream to its end and appended a new
 * claim entry.
 */
type State = 'standby' | 'claiming' | 'serving' | 'resyncing' | 'releasing'

/** What the actor tells each replica on a beat. */
export interface Beat {
  /** The unit prefers this host among the live ones: claim a free lease at once. */
  preferredHere: boolean
  /** Another live host is preferred: hand the unit over to it once its follow report says it has nearly caught up. */
  handOverTo: string | undefined
  /** In the host's first lease period: only a lease handed to this host by name is claimed (nothing else is looked at yet). */
  handedOnly?: boolean
}

export class Replica {
  private state: State = 'standby'
  /** The last sequence committed to the unit's LMDB. */
  protected applied: number
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
  /** Set while follow() is starting a tail (and what comes before it, a snapshot's restore): one at a time. */
  private startingTail = false
  /** The stream's last sequence as the tail last saw it (a delivered entry's sequence plus the entries pending after it). */
  private streamEnd = 0
  /** While serving: the claim's and renewals' revisions, against which follow reports are judged. */
  private readonly trail: OwnerTrail

  constructor(private readonly unit: ReplicatedUnit, private readonly log: StreamLog, private readonly host: UnitHost) {
    this.applied = unit.appliedSequence()
    this.trail = new OwnerTrail(host.leaseMs)
  }

  /** The epoch of the lease this host holds (0: none). */
  protected get epoch(): number {
    return this.held?.value.epoch ?? 0
  }

  /** After this host's claim entry, once it serves. */
  protected served(): void {}

  /** On each beat while this host serves, after the renewal. */
  protected ownerBeat(): void {}

  /** At the end of each write, in the write queue, before it resolves (`upkeep`: as write() was told). */
  protected async afterWrite(_upkeep: boolean): Promise<void> {}

  /** Before a tail starts, once the queued applies are done (a shard restores a snapshot when the stream no longer continues what it holds). */
  protected async beforeTail(): Promise<void> {}

  /** A tail met an entry after `applied` with sequences missing between them: whether the stream was purged past this host (else the hole is one the unit expects: a shard's erased grant). */
  protected async purgedPast(_applied: number): Promise<boolean> {
    return false
  }

  /** What this host reports of the unit while it follows the stream (undefined otherwise: serving, handing over, restoring). */
  progress(): FollowReport | undefined {
    if (this.state !== 'standby' || this.tail === undefined) return undefined
    return { applied: this.applied, end: Math.max(this.applied, this.streamEnd) }
  }

  serves(): boolean {
    return this.state === 'serving' && this.host.now() < this.validUntil
  }

  /**
   * The owner this host believes in: itself while it serves; else the holder
   * last read, while its lease changed within a lease period (undefined while
   * this host claims, resyncs or hands over: nobody to send requests to).
   */
  owner(): LeaseValue | undefined {
    if (this.serves()) return this.held!.value
    if (this.held !== undefined || !this.seen.present) return undefined
    return this.host.now() - this.seen.at < this.host.leaseMs ? this.seen.value : undefined
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
        if (this.host.now() >= this.renewDue) await this.renew()
        if (this.state === 'resyncing') await this.rejoin()
        if (this.state === 'serving' && b.handOverTo !== undefined && await this.caughtUp(b.handOverTo)) await this.release(`it prefers ${b.handOverTo}`, b.handOverTo)
        else if (this.state === 'serving') this.ownerBeat()
      } else await this.watchOrClaim(b.preferredHere, b.handedOnly === true)
    } catch (err) {
      this.host.warn(`cluster: ${this.unit.name}: the lease beat failed`, err)
    } finally {
      this.busy = false
    }
  }

  private renewDue = 0

  /**
   * Whether `to` has nearly caught up with the stream, by its follow report
   * (catch-up.ts): a unit handed to a host far behind has no owner until that
   * host has applied the rest. A report that cannot be read now is "not yet"
   * (bounded, so the next renewal is not held up).
   */
  private async caughtUp(to: string): Promise<boolean> {
    const key = this.unit.followKey?.(to)
    if (key === undefined) return true
    let lag: number | undefined
    try {
      const entry = await withTimeout(this.host.kv.get(key), this.host.leaseMs / 4, 'reading a follow report')
      const report = entry?.operation === 'PUT' ? parseFollowReport(entry.string()) : undefined
      lag = report === undefined ? undefined : this.trail.lag(report, entry!.revision)
    } catch {
      lag = undefined
    }
    const allowed = this.trail.allowedLag()
    if (lag !== undefined && lag <= allowed) return true
    // Once a lease period while it waits: why a shard stays where placement does not want it.
    if (this.host.now() - this.waitLoggedAt >= this.host.leaseMs) {
      this.waitLoggedAt = this.host.now()
      this.host.info(`cluster: ${this.unit.name}: ${this.host.nodeId} waits to hand it to ${to}, ${lag === undefined ? 'which has no recent follow report' : `which lacks ${lag} stream entries (at most ${allowed} for a hand-over)`}`)
    }
    return false
  }

  private waitLoggedAt = Number.NEGATIVE_INFINITY

  private async renew(): Promise<void> {
    const held = this.held!
    const started = this.host.now()
    const applied = this.applied
    try {
      const revision = await this.host.kv.update(this.unit.leaseKey, JSON.stringify(held.value), held.revision)
      if (this.held !== held) return
      this.held = { value: held.value, revision }
      this.validUntil = started + LEASE_TRUST * this.host.leaseMs
      this.renewDue = started + this.host.leaseMs / 3
      this.trail.note(started, revision, applied)
    } catch (err) {
      if (/wrong last sequence/i.test(String(err))) this.lose('another host wrote its lease')
      else throw err
    }
  }

  private async watchOrClaim(preferredHere: boolean, handedOnly: boolean): Promise<void> {
    const started = this.host.now()
    const entry = await this.host.kv.get(this.unit.leaseKey)
    const revision = entry?.revision ?? 0
    const present = entry !== null && entry.operation === 'PUT'
    // In the first lease period only a lease named for this host counts; what else was read is not noted, so that
    // the free and expired leases are timed as before from the first look after it.
    if (handedOnly && (!present || parseLease(entry!.string())?.handTo !== this.host.nodeId)) return
    if (revision !== this.seen.revision) this.seen = { revision, at: started, value: present ? parseLease(entry!.string()) : undefined, present }
    // Free since: when it was seen deleted or absent, or when the holder's last renewal ran out.
    const freeSince = !this.seen.present || this.seen.value === undefined ? this.seen.at : this.seen.at + this.host.leaseMs
    const freeFor = started - freeSince
    // A lease handed to this host is claimed at once. A deleted lease waits a lease period for its preferred host;
    // an expired one (its holder stopped, or the host it was handed to did not take it) is anyone's.
    const handedHere = this.seen.value?.handTo === this.host.nodeId
    const expired = this.seen.present && this.seen.value !== undefined
    if (!handedHere && (freeFor < 0 || (!preferredHere && !expired && freeFor < this.host.leaseMs))) return
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
    const key = this.unit.leaseKey
    const newRevision = revision === undefined ? await this.host.kv.create(key, JSON.stringify(value)) : await this.host.kv.update(key, JSON.stringify(value), revision)
    this.held = { value, revision: newRevision }
    this.validUntil = started + LEASE_TRUST * this.host.leaseMs
    this.renewDue = started + this.host.leaseMs / 3
    this.state = 'claiming'
    this.trail.reset()
    this.trail.note(started, newRevision, this.applied)
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
      // The first entry of an empty stream carries what the unit held before it was replicated (the auth store's upgrade).
      const effects = this.applied === 0 && this.unit.snapshot !== undefined ? this.unit.snapshot() : []
      await this.commit(await this.appendAll([{ node: this.host.nodeId, epoch: value.epoch, effects }]))
    } catch (err) {
      if (err instanceof Fenced) this.lose(fencedWhy)
      else this.resync(`its claim entry was not appended: ${(err as Error).message}`, false)
      return
    }
    if (this.held?.value !== value || this.state !== 'claiming') return
    // What this actor's caches hold may predate entries it applied as a standby.
    this.unit.forget()
    this.state = 'serving'
    this.host.ownership(true, value.epoch)
    this.host.info(`cluster: ${this.unit.name}: ${this.host.nodeId} serves it (lease epoch ${value.epoch}, stream sequence ${this.applied})`)
    this.served()
  }

  /** Stops serving but keeps the lease, and follows the stream to its end (rejoin() serves again). */
  private resync(why: string, wasServing = true): void {
    if (this.state !== 'serving' && this.state !== 'claiming') return
    this.state = 'resyncing'
    this.host.warn(`cluster: ${this.unit.name}: ${this.host.nodeId} stops serving it until it has followed its stream (${why})`)
    if (wasServing) this.host.ownership(false, this.held?.value.epoch ?? 0)
    this.unit.forget()
    void this.queue.then(() => this.follow(), () => this.follow())
  }

  /**
   * A hand-over: tells the front first (new calls wait for the next owner),
   * still serves the writes already queued here, then stops serving and
   * writes the lease as handed to `to`, which claims it at once (without
   * `to`, deletes it: any host may claim it).
   */
  async release(why: string, to?: string): Promise<void> {
    const held = this.held
    if (this.state !== 'serving' || held === undefined) return
    this.host.ownership(false, held.value.epoch)
    // Writes the front sent before it heard keep coming for a moment: served until none is left in the queue.
    for (let queued = this.queue; ; queued = this.queue) {
      await queued
      if (queued === this.queue || !this.serves()) break
    }
    if (this.held !== held || this.state !== 'serving') return
    this.state = 'releasing'
    await this.queue
    try {
      if (to === undefined) await this.host.kv.delete(this.unit.leaseKey, { previousSeq: held.revision })
      else await this.host.kv.update(this.unit.leaseKey, JSON.stringify({ ...held.value, handTo: to }), held.revision)
    } catch (err) {
      this.host.warn(`cluster: ${this.unit.name}: its lease could not be deleted (it runs out instead)`, err)
    }
    this.host.info(`cluster: ${this.unit.name}: ${this.host.nodeId} handed it over (${why})`)
    this.state = 'standby'
    this.held = undefined
    this.validUntil = 0
    this.unit.forget()
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
    this.host.info(`cluster: ${this.unit.name}: ${this.host.nodeId} no longer serves it (${why})`)
    if (served) this.host.ownership(false, epoch)
    this.unit.forget()
    void this.queue.then(() => this.follow(), () => this.follow())
  }

  /**
   * The owner's write path: `run` is the batch, run in a transaction that is
   * rolled back while its effects are recorded; the effects are appended;
   * then LMDB commits them with the sequence. Rejects with Fenced or another
   * error when nothing was committed. `upkeep`: the unit's own upkeep
   * (afterWrite is told: a shard then also erases grant messages earlier
   * attempts or a former owner left).
   */
  write<T>(run: () => T, abort: unknown, upkeep = false): Promise<T> {
    const next = this.queue.then(async () => {
      if (!this.serves()) throw this.unavailable(`${this.host.nodeId} does not serve ${this.unit.name} now; retry after the lease period`, true)
      let result!: T
      let durable: Promise<void> = Promise.resolve()
      this.unit.recorder.start()
      let effects: Effect[]
      try {
        this.unit.env.transactionSync(() => {
          result = run()
          return abort
        })
      } finally {
        effects = this.unit.recorder.take()
        // The caches saw the batch; LMDB has not yet: reads until the commit come from LMDB.
        this.unit.forget()
      }
      if (effects.length > 0) {
        const epoch = this.held!.value.epoch
        const entries = this.unit.entries?.(effects, this.host.nodeId, epoch) ?? [{ node: this.host.nodeId, epoch, effects }]
        let appended: Appended[]
        try {
          appended = await this.appendAll(entries)
        } catch (err) {
          throw await this.appendFailed(err)
        }
        try {
          durable = (await this.commit(appended, true)).durable
          // A read on this thread between the forget above and the commit cached what LMDB held before the
          // batch (an event head: the next append would reuse a sequence and overwrite an event).
          this.unit.forget()
        } catch (err) {
          // In the stream but not here: follow the stream, which brings it.
          this.resync(`LMDB did not commit an appended batch: ${(err as Error).message}`)
          throw err
        }
      }
      await this.afterWrite(upkeep)
      return { result, durable }
    })
    this.queue = next.catch(() => undefined)
    // The next batch appends while this one's sync is under way; this one is answered once it is durable.
    return next.then(async ({ result, durable }) => {
      await durable
      return result
    })
  }

  /**
   * Fenced: another host owns the stream now; this one stops serving. Any
   * other failure (a full stream, no quorum, a timeout): if the stream did
   * not move, nothing was stored and the unit goes on serving; if it moved
   * or cannot be read, this host follows the stream to learn what it holds.
   */
  private async appendFailed(err: unknown): Promise<Error> {
    const why = (err as Error).message
    if (err instanceof Fenced) this.lose('its append was fenced: another host claimed it')
    else {
      const last = await this.log.lastSequence().catch(() => undefined)
      if (last !== this.applied) this.resync(`an append failed and the stream ${last === undefined ? 'cannot be read' : 'moved'}: ${why}`)
      else this.host.warn(`cluster: ${this.unit.name}: an append failed, nothing stored: ${why}`)
    }
    return this.unavailable(`the replicated log did not take the write (${why}); retry after the lease period`)
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
      const sequence = await this.log.append(encodeEntry(entry), after, `${this.unit.id}.${after + 1}.${this.host.nodeId}.${entry.epoch}`)
      out.push({ entry, sequence })
      after = sequence
    }
    return out
  }

  private unavailable(message: string, notRun = false): Error {
    return this.host.unavailable(message, Math.ceil(this.host.leaseMs / 1000), notRun)
  }

  /**
   * Commits entries with their sequences, then runs what the unit does once
   * they are durable (a shard destroys the keys they revoked, erases grant
   * messages); when there is such work, or for a standby's apply, it
   * resolves once the commit is durable. An owner's batch (`acknowledged`)
   * without such work resolves once committed and visible, handing back
   * what its answer still waits for: LMDB's sync (local durability), or
   * nothing (quorum: the stream holds it, and a host whose LMDB lost it to a
   * crash replays it from there).
   */
  private async commit(appended: readonly Appended[], acknowledged = false): Promise<{ durable: Promise<void> }> {
    let after: (() => void) | undefined
    const done = this.unit.env.transaction(() => { after = this.unit.apply(appended) })
    const flushed = flushOfQueuedWrites(this.unit.env)
    await done
    const last = appended[appended.length - 1]!.sequence
    if (acknowledged && after === undefined) {
      this.applied = last
      flushed.catch((err: unknown) => this.host.warn(`cluster: ${this.unit.name}: LMDB's sync of a committed batch failed`, err))
      return { durable: this.host.durability === 'quorum' ? Promise.resolve() : flushed }
    }
    await flushed
    this.applied = last
    after?.()
    return { durable: Promise.resolve() }
  }

  private async follow(): Promise<void> {
    if ((this.state !== 'standby' && this.state !== 'resyncing') || this.tail !== undefined || this.startingTail) return
    this.startingTail = true
    let tail: ConsumerMessages
    try {
      await this.applying
      await this.beforeTail()
      // Pull requests (and heartbeats) within two lease periods: a tail stuck on a dead NATS server is noticed in
      // about that; shorter made a loaded host's tails miss heartbeats that were only late.
      tail = await this.log.follow(this.applied + 1, Math.max(5000, Math.min(30_000, 2 * this.host.leaseMs)))
    } catch (err) {
      this.host.warn(`cluster: ${this.unit.name}: cannot follow its stream; trying again`, err)
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
      // Entries delivered while the apply before them ran: applied together (one transaction and one sync per run
      // of them: one each per entry kept a standby that was catching up at a few hundred entries a second).
      let delivered: Appended[] = []
      for await (const m of tail) {
        const sequence = m.seq
        // The follow report's end: what the stream held when this entry was delivered (pending: those after it).
        this.streamEnd = Math.max(this.streamEnd, sequence + Math.max(0, m.info.pending))
        if (sequence <= this.applied) continue
        delivered.push({ entry: decodeEntry(m.data), sequence })
        // An apply is queued already, and takes this entry with the others when it runs.
        if (delivered.length > 1) continue
        this.applying = this.applying.then(async () => {
          const batch = delivered
          delivered = []
          if (!broken) await this.applyFollowed(batch)
        }).catch((err: unknown) => {
          // The entries queued behind a failed one return at once (broken): one warning, one new follow.
          broken = true
          if (this.tail !== tail) return
          if (err instanceof StreamGap) this.host.warn(`cluster: ${this.unit.name}: ${err.message}; restoring a snapshot`)
          else this.host.warn(`cluster: ${this.unit.name}: applying the stream entries after ${this.applied} failed; following again from there`, err)
          void this.stopFollowing().then(() => setTimeout(() => void this.follow(), 1000).unref())
        })
      }
    })().catch((err: unknown) => this.host.warn(`cluster: ${this.unit.name}: following the stream stopped`, err))
  }

  /**
   * A standby's apply of entries delivered in order: each run of consecutive
   * sequences in one transaction (at most FOLLOW_BATCH entries). A sequence
   * may be skipped (a shard's erased grant message: the ordered consumer
   * never skips any other); a skip the unit does not expect is a purge that
   * passed this host (StreamGap).
   */
  private async applyFollowed(batch: readonly Appended[]): Promise<void> {
    let run: Appended[] = []
    let last = this.applied
    for (const a of batch) {
      if (a.sequence <= last) continue
      if (a.sequence > last + 1 || run.length >= FOLLOW_BATCH) {
        if (run.length > 0) await this.commit(run)
        run = []
        if (a.sequence > this.applied + 1 && await this.purgedPast(this.applied)) {
          throw new StreamGap(`entry ${a.sequence} follows ${this.applied}: the stream was purged past what this host applied`)
        }
      }
      run.push(a)
      last = a.sequence
    }
    if (run.length > 0) await this.commit(run)
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

  /** A clean shutdown: the unit is handed over at once (to `successor` when given) rather than left to run out. */
  async close(successor?: string): Promise<void> {
    await this.release('this host is shutting down', successor).catch(() => undefined)
    this.state = 'standby'
    this.held = undefined
    await this.queue.catch(() => undefined)
    await this.stopFollowing()
  }
}

