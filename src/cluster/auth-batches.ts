// Groups the auth store's writes into replicated batches (docs/manual/cluster.md,
// "The authorization service") with the shards' joiner
// (src/replication/coalesced-writes.ts: every write issued while one
// replicated write is under way joins the next). What the auth store adds:
// in a batch each write runs in its own child transaction (one that throws
// leaves nothing, and only its caller sees the error), in the order they
// were issued; each sees the writes before it, so a lock-out counter or a
// code's single use stays exact. Each write's promise settles once its
// batch is appended and committed, or is refused (the error of the whole
// batch: no lease, a fenced or failed append).
import { CoalescedWrites, type ReplicatedWrite } from '../replication/coalesced-writes'
import type { AuthRecorder } from './auth-recorder'

type Outcome = { value: unknown } | { error: unknown }

/**
 * A write's result as a plain value: lmdb-js's put and remove inside a
 * transaction return an already-settled promise marked isSync, which a child
 * transaction would otherwise wait for (ending after its parent).
 */
function plain(value: unknown): unknown {
  const v = value as { then?: unknown; isSync?: boolean; result?: unknown } | null
  if (v === null || typeof v !== 'object' || typeof v.then !== 'function') return value
  if (v.isSync === true) return v.result
  throw new Error('an auth store transaction callback returned a promise (it must be synchronous)')
}

export class AuthBatches {
  private readonly writes: CoalescedWrites
  /** Writes issued and not yet settled, as their batch's outcome (rejected only when the batch was refused). */
  private readonly pending = new Set<Promise<Outcome>>()

  /** `replicate` runs a batch's writes in a recorded transaction, appends and commits them (Replica.write). */
  constructor(private readonly recorder: AuthRecorder, replicate: ReplicatedWrite) {
    this.writes = new CoalescedWrites(replicate)
    recorder.outside = (run) => this.add(run)
  }

  private add<T>(run: () => T): Promise<T> {
    const outcome = this.writes.add(() => this.isolated(run))
    this.pending.add(outcome)
    const forget = (): void => { this.pending.delete(outcome) }
    outcome.then(forget, forget)
    return outcome.then((o) => {
      if ('error' in o) throw o.error
      return o.value as T
    })
  }

  /** One write in its own child transaction: what it recorded goes with it when it throws. */
  private isolated(run: () => unknown): Outcome {
    const mark = this.recorder.mark()
    try {
      return { value: this.recorder.env.childTransaction(() => plain(run())) }
    } catch (error) {
      this.recorder.dropAfter(mark)
      return { error }
    }
  }

  /** Waits until every write issued so far is committed; rejects when a batch of them was refused. */
  async settle(): Promise<void> {
    await Promise.all(this.pending)
  }
}
