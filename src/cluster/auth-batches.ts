// Groups the auth store's writes into replicated batches (docs/cluster.md,
// "The authorization service"): the replica appends one batch at a time, so
// every write issued while one is under way joins the next, which runs as
// soon as it ends. In a batch each write runs in its own child transaction
// (one that throws leaves nothing, and only its caller sees the error), in
// the order they were issued; each sees the writes before it, so a lock-out
// counter or a code's single use stays exact. Each write's promise settles
// once its batch is appended and committed, or is refused (the error of the
// whole batch: no lease, a fenced or failed append).
import type { AuthRecorder } from './auth-recorder'

interface Write {
  run: () => unknown
  resolve(value: unknown): void
  reject(err: unknown): void
}

interface Batch {
  writes: Write[]
  /** Settles when the batch is committed; rejects when it was refused as a whole. */
  done: Promise<void>
  finish(err?: unknown): void
}

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

function newBatch(): Batch {
  let finish!: (err?: unknown) => void
  const done = new Promise<void>((resolve, reject) => { finish = (err) => (err === undefined ? resolve() : reject(err)) })
  done.catch(() => undefined)
  return { writes: [], done, finish }
}

export class AuthBatches {
  /** The batch taking writes now, run when the one under way ends. */
  private next: Batch | undefined
  private underWay: Batch | undefined
  private chain: Promise<void> = Promise.resolve()

  /** `replicate` runs a batch's writes in a recorded transaction, appends and commits them (Replica.write). */
  constructor(private readonly recorder: AuthRecorder, private readonly replicate: (run: () => void) => Promise<void>) {
    recorder.outside = (run) => this.add(run)
  }

  private add<T>(run: () => T): Promise<T> {
    let batch = this.next
    if (batch === undefined) {
      const fresh = newBatch()
      batch = this.next = fresh
      this.chain = this.chain.then(() => this.run(fresh))
    }
    const writes = batch.writes
    return new Promise<T>((resolve, reject) => { writes.push({ run, resolve: resolve as (v: unknown) => void, reject }) })
  }

  private async run(batch: Batch): Promise<void> {
    if (this.next === batch) this.next = undefined
    this.underWay = batch
    const outcomes: ({ value: unknown } | { error: unknown })[] = []
    try {
      await this.replicate(() => {
        outcomes.length = 0 // a batch run again starts afresh
        for (const w of batch.writes) {
          const mark = this.recorder.mark()
          try {
            outcomes.push({ value: this.recorder.env.childTransaction(() => plain(w.run())) })
          } catch (error) {
            this.recorder.dropAfter(mark)
            outcomes.push({ error })
          }
        }
      })
    } catch (err) {
      for (const w of batch.writes) w.reject(err)
      batch.finish(err)
      return
    } finally {
      if (this.underWay === batch) this.underWay = undefined
    }
    batch.writes.forEach((w, i) => {
      const o = outcomes[i]!
      if ('error' in o) w.reject(o.error)
      else w.resolve(o.value)
    })
    batch.finish()
  }

  /** Waits until every write issued so far is committed; rejects when a batch of them was refused. */
  async settle(): Promise<void> {
    await Promise.all([this.underWay?.done, this.next?.done])
  }
}
