// One shard in cluster mode, on one host: the generic replica
// (src/replication/replica.ts: lease, claim, fencing, the write path,
// following the stream) over the shard's store, its recorder and its apply
// (apply.ts), with what only a shard does, through the replica's hooks:
//
// - Key grants (docs/design/replication.md, "Crypto-shredding across hosts"): each new
//   data key of a batch is a stream entry of its own, appended before the
//   batch; apply.ts records which grant messages a revocation or a re-grant
//   left to erase, and the owner erases them (ShardLog.erase) before a write
//   resolves, again on its beats while one fails, and after each claim (what
//   a former owner left). Applying entries also destroys the key slots of
//   consents they revoked.
// - The KEK re-wrap: after each claim, the owner wraps live keys still under
//   a previous KEK again, as writes of its own (rewrap.ts).
// - Snapshots (snapshots.ts): the owner takes one on its beat when due and
//   purges the stream below the oldest kept; a standby whose applied
//   sequence the stream no longer continues (or that has nothing yet)
//   restores one before it follows, and one that meets a purge while
//   following (a hole that a newer snapshot explains; other holes are erased
//   grants) starts over from there.
import { followReportKey, shardLeaseKey } from '../../../src/contract/cluster-names'
import type { Effect, StreamEntry } from '../../../src/replication/effects'
import { Replica, type UnitHost } from '../../../src/replication/replica'
import { forgetUncommitted, type ShardStore } from '../../store/shard-store'
import { ShardUnavailable } from '../../store/unavailable'
import { applyEntry, appliedSequence, grantErased, grantsToErase, type Applied } from './apply'
import type { Recorder } from './recorder'
import { rewrapUnderCurrentKek } from './rewrap'
import type { ShardLog } from './shard-log'
import type { Snapshots } from '../../../src/replication/snapshots'

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

export interface ReplicaHost extends Omit<UnitHost, 'ownership' | 'unavailable'> {
  /** Told whenever this host starts or stops serving the shard. */
  ownership(shard: number, owned: boolean, epoch: number): void
  /** Destroys key slots of consents revoked by applied entries, once durable (shred log first). */
  destroyKeys(store: ShardStore, slots: number[]): void
}

export class ShardReplica extends Replica {
  /** Grant messages wait to be erased from the stream (apply.ts records which); the owner erases them. */
  private erasePending = false
  private eraseQueued = false
  /** After a failed erasure, the beat tries again from then on (an attempt holds the write queue up to its timeout). */
  private eraseRetryAt = 0
  /** The entries last committed left grant messages to erase (the write that appended them erases them before it resolves). */
  private erasuresLeft = false

  constructor(readonly store: ShardStore, private readonly shardLog: ShardLog, private readonly recorder: Recorder, private readonly shardHost: ReplicaHost, private readonly snapshots?: Snapshots) {
    const self: { replica?: ShardReplica } = {}
    super({
      name: `shard ${store.shard}`, id: String(store.shard), leaseKey: shardLeaseKey(store.shard), env: store.env, recorder,
      appliedSequence: () => appliedSequence(store),
      apply: (appended) => {
        const applied: Applied = { revoked: [], erasures: false }
        for (const a of appended) applyEntry(recorder, a.entry, a.sequence, applied)
        return applied.erasures || applied.revoked.length > 0 ? () => self.replica!.committed(applied) : undefined
      },
      forget: () => forgetUncommitted(store),
      entries: entriesOf,
      followKey: (node) => followReportKey(store.shard, node),
    }, shardLog, {
      ...shardHost,
      ownership: (owned, epoch) => shardHost.ownership(store.shard, owned, epoch),
      unavailable: (message, retryAfter, notRun) => new ShardUnavailable(message, retryAfter, notRun),
    })
    self.replica = this
  }

  get shard(): number {
    return this.store.shard
  }

  /** Once entries are durable: their erasures are pending, the keys they revoked destroyed. */
  private committed(applied: Applied): void {
    if (applied.erasures) {
      this.erasePending = true
      this.erasuresLeft = true
    }
    if (applied.revoked.length > 0) this.shardHost.destroyKeys(this.store, applied.revoked)
  }

  /** After a claim: erasures a former owner left (it died, or was fenced, before it erased), and a KEK rotation under way. */
  protected override served(): void {
    this.erasuresLeft = false
    this.erasePending = true
    this.maintain()
  }

  protected override ownerBeat(): void {
    if (this.erasePending && !this.eraseQueued && this.shardHost.now() >= this.eraseRetryAt) this.maintain()
    if (this.serves()) this.snapshots?.tick(this.applied, this.epoch, () => this.serves())
  }

  /** Before the answer: a revocation's 204 comes once its grant message is erased (or its erasure is left to retry); `upkeep`: also those earlier attempts or a former owner left. */
  protected override async afterWrite(upkeep: boolean): Promise<void> {
    const left = this.erasuresLeft
    this.erasuresLeft = false
    if ((upkeep || left) && this.erasePending) await this.eraseGrants()
  }

  /**
   * Before a tail starts: a snapshot when the stream no longer continues
   * what LMDB holds (snapshots.ts). The sequence is read from LMDB, not
   * memory: a restore cut short left it at 0 there, and must run again.
   */
  protected override async beforeTail(): Promise<void> {
    if (this.snapshots === undefined) return
    this.applied = appliedSequence(this.store)
    const restored = await this.snapshots.restoreIfBehind(this.applied)
    this.applied = appliedSequence(this.store)
    if (restored !== undefined && restored.destroyed.length > 0) this.shardHost.destroyKeys(this.store, restored.destroyed)
  }

  /** A skipped sequence is an erased key grant, or a purge that passed this host (then a snapshot is newer than what it applied). */
  protected override async purgedPast(applied: number): Promise<boolean> {
    return this.snapshots !== undefined && await this.snapshots.passedBy(applied)
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
        if (rewrapped > 0) this.shardHost.info(`cluster: shard ${this.shard}: re-wrapped ${rewrapped} live data keys under the current KEK`)
        if (rotating) this.shardHost.info(`cluster: shard ${this.shard}: every live data key is wrapped by the current KEK`)
      }, (err: unknown) => this.shardHost.warn(`cluster: shard ${this.shard}: the KEK re-wrap or the grant erasures did not finish (tried again on the next claim)`, err))
      .finally(() => { this.eraseQueued = false })
  }

  /** Erases the grant messages apply.ts left to erase; one that fails stays for the next write or beat. */
  private async eraseGrants(): Promise<void> {
    this.erasePending = false
    for (const sequence of grantsToErase(this.store)) {
      try {
        await this.shardLog.erase(sequence)
        await grantErased(this.store, sequence)
      } catch (err) {
        this.erasePending = true
        this.eraseRetryAt = this.shardHost.now() + ERASE_RETRY_MS
        this.shardHost.warn(`cluster: shard ${this.shard}: the key grant at stream sequence ${sequence} is not erased yet (tried again in ${ERASE_RETRY_MS / 1000} s)`, err)
        return
      }
    }
  }
}
