// Group commit: all writes of one shard that arrive in one message run in
// one LMDB write transaction, each in a child transaction of its own
// (store/isolated-write.ts), and are answered once the transaction is
// flushed to disk (DESIGN: durable before 2xx).
import type { Operation } from '../../src/contract/messages'
import { flushOfQueuedWrites } from '../../src/contract/commit-flush'
import { causeOf } from '../../src/core/storage-failure'
import { commitFailure } from '../store/commit-failure'
import { withDeferredWrites } from '../store/deferred-writes'
import { applyIsolated } from '../store/isolated-write'
import type { ShardContext } from '../store/context'
import type { OpResult } from '../store/result'
import { forgetUncommitted, type ShardStore } from '../store/shard-store'
import { traces } from '../../src/telemetry/traces'
import { reply, type Outbox } from './outbox'
import { logError } from './log'
import { CommitSpans } from './commit-spans'

/** A write of a batch; `trace`: its actor call's traceparent, with traces on only. */
export interface WriteItem { id: number; op: Operation; trace?: string }

export interface CommitHooks {
  context(store: ShardStore, time: number): ShardContext
  run(sc: ShardContext, op: Operation): OpResult
  /** After the flush: the tenants whose event log grew. */
  eventsAppended(store: ShardStore, tenants: Iterable<string>): void
  /** After the flush, when the transaction wrote a schedule. */
  schedulesChanged(): void
  /** After the flush: destroys the key slots of the batch's revocations (the actor logs them first: store/shred-keys.ts). */
  destroyKeys?(store: ShardStore, slots: number[]): void
  /** Cluster mode: the batch's transaction, replicated before it commits (replication/start.ts); else the local one. */
  transact?<T>(store: ShardStore, run: () => T): Promise<T>
  /**
   * The local journal (local-journal.ts): `transact` resolves once the batch is
   * durable in the journal, so the answer does not wait for LMDB's flush; a
   * batch with revocations waits for `beforeShred` (LMDB synced, no journal
   * segment left that holds what the revocation shreds) before its keys go.
   */
  journal?: { transact<T>(store: ShardStore, run: () => T): Promise<T>; beforeShred(store: ShardStore): Promise<void> }
  /** After the flush: the batch's size, and how long the commit and the flush took. */
  measured?(shard: number, size: number, commitSeconds: number, flushSeconds: number): void
}

export class GroupCommit {
  private readonly pending = new Set<Promise<void>>()

  constructor(private readonly outbox: Outbox, private readonly hooks: CommitHooks) {}

  commit(store: ShardStore, items: WriteItem[], time: number): void {
    let sc = this.hooks.context(store, time)
    const started = performance.now()
    const spans = traces === undefined ? undefined : CommitSpans.of(traces, store.shard, items.map((i) => i.trace))
    // lmdb-js runs the callback in its write transaction once its write thread
    // has begun one (a batch queued while another waits to begin joins it), and
    // commits when it returns. With overlappingSync that transaction commits
    // while the previous one's sync is still under way; its promise resolves
    // once its own sync is done (docs/design/architecture.md, "Writes: group commit and durability").
    // Cluster mode's transaction records the batch's effects and appends them before committing (hooks.transact).
    const journal = this.hooks.journal
    const transact = this.hooks.transact ?? journal?.transact.bind(journal) ??
      ((s: ShardStore, run: () => OpResult[]) => s.env.transaction(run) as Promise<OpResult[]>)
    const done = transact(store, () => {
      const batch = this.runBatch(sc, items)
      spans?.ran()
      sc = batch.sc
      // Here, and only here, the batch's effects are all known and none is
      // committed: a step that must see them before the commit goes here.
      return batch.results
    })
    // This commit's own flush, not the newest one's when the commit is done (src/contract/commit-flush.ts).
    const flushed = journal === undefined ? flushOfQueuedWrites(store.env) : undefined
    const answered = done
      .then(async (results) => {
        const committed = performance.now()
        await flushed
        spans?.durable()
        this.hooks.measured?.(store.shard, items.length, (committed - started) / 1000, (performance.now() - committed) / 1000)
        // Crypto-shredding after the revocation is durable (store/consents.ts says why the order).
        if (journal !== undefined && sc.shred.length > 0) await journal.beforeShred(store)
        const shredFailure = await this.destroyKeys(store, sc.shred, items)
        // Every write is on disk: only the revocations, whose keys are not yet destroyed, answer the failure
        // (their records say revoked, so nothing opens; the next start destroys the keys).
        results.forEach((r, n) => this.outbox.send(reply(items[n]!.id, shredFailure !== undefined && items[n]!.op.op === 'revokeConsent' ? shredFailure : r)))
        this.hooks.eventsAppended(store, sc.touched)
        this.announceWebhookChanges(items, results)
        if (sc.schedulesChanged) this.hooks.schedulesChanged()
        spans?.end()
      })
      .catch(async (err: unknown) => {
        forgetUncommitted(store)
        const cause = await causeOf(err)
        const failure = commitFailure(cause)
        // A batch refused before it ran (its shard moved to another host) is routine: the front sends it on.
        if (failure.kind !== 'error' || failure.notRun !== true) logError(`shard actor: commit of ${items.length} writes to shard ${store.shard} failed`, cause, items.map((i) => i.id))
        for (const item of items) this.outbox.send(reply(item.id, failure))
        spans?.end(failure.kind === 'error' ? failure.message : 'the commit failed')
      })
      .finally(() => this.pending.delete(answered))
    this.pending.add(answered)
  }

  /**
   * Runs the batch's writes inside the transaction. Fast path: the whole batch
   * in one child transaction. Only if a write throws is it rolled back and the
   * batch run again, each write in a child of its own, so that the failing one
   * fails alone, with a fresh context (what it collected was rolled back too).
   */
  private runBatch(sc: ShardContext, items: readonly WriteItem[]): { sc: ShardContext; results: OpResult[] } {
    const { store } = sc
    try {
      // Inside a running write transaction lmdb-js runs the child synchronously and returns the callback's value (its typings say Promise).
      return { sc, results: store.env.childTransaction(() => withDeferredWrites(store, () => items.map((item) => this.hooks.run(sc, item.op)))) as unknown as OpResult[] }
    } catch {
      forgetUncommitted(store)
      const fresh = this.hooks.context(store, sc.now)
      return { sc: fresh, results: items.map((item) => this.applyAlone(fresh, item)) }
    }
  }

  /** Destroys the batch's revoked key slots; a failure (the shred log cannot be written) is logged and returned, not thrown. */
  private async destroyKeys(store: ShardStore, slots: number[], items: readonly WriteItem[]): Promise<OpResult | undefined> {
    if (slots.length === 0) return undefined
    try {
      if (this.hooks.destroyKeys !== undefined) this.hooks.destroyKeys(store, slots)
      else for (const slot of slots) store.keys.destroy(slot)
      return undefined
    } catch (err) {
      const cause = await causeOf(err)
      logError(`shard actor: destroying ${slots.length} revoked key slots of shard ${store.shard} failed (finished at the next start)`, cause, items.map((i) => i.id))
      return commitFailure(cause)
    }
  }

  /** Resolves once every commit under way is answered. */
  async drain(): Promise<void> {
    await Promise.all(this.pending)
  }

  /** A write of the batch, rolled back alone if it throws. */
  private applyAlone(sc: ShardContext, item: WriteItem): OpResult {
    const shredBefore = sc.shred.length
    return applyIsolated(sc.store, () => withDeferredWrites(sc.store, () => this.hooks.run(sc, item.op)), () => { sc.shred.length = shredBefore }, `write ${item.id} (${item.op.op})`)
  }

  /** Tells the front thread's webhook delivery which tenants' webhooks were created or deleted. */
  private announceWebhookChanges(items: WriteItem[], results: OpResult[]): void {
    const tenants = new Set<string>()
    items.forEach(({ op }, n) => {
      if ((op.op === 'createWebhook' || op.op === 'deleteWebhook') && results[n]!.kind === 'ok') tenants.add(op.tenant)
    })
    for (const tenant of tenants) this.outbox.send({ kind: 'webhooks', id: 0, tenant })
  }
}
