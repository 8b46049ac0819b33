// One shard's group-commit batches, joined while they wait (docs/cluster.md,
// "The replicated log"): the replica appends one batch at a time, each a NATS
// round trip, an LMDB commit and a flush. Without joining, every batch the
// front handed over while one was under way waited for its own turn, so 128
// concurrent writers got the rate of one sequential writer. Here every batch
// that arrives while the replica is busy joins the next replicated write:
// their callbacks run one after another in its one recorded transaction (as
// lmdb-js runs queued transactions together on one machine), so they cost
// one append, one commit and one flush together.

/** The replica's write: `run` inside a recorded transaction, appended, then committed (shard-replica.ts). */
export type ReplicatedWrite = (run: () => unknown[]) => Promise<unknown[]>

interface Waiting {
  runs: (() => unknown)[]
  settle: { resolve(value: unknown): void; reject(err: unknown): void }[]
}

export class CoalescedWrites {
  /** The write that has not started yet: what arrives now joins it. */
  private waiting: Waiting | undefined

  constructor(private readonly write: ReplicatedWrite) {}

  add<T>(run: () => T): Promise<T> {
    let w = this.waiting
    if (w === undefined) {
      const fresh: Waiting = { runs: [], settle: [] }
      w = this.waiting = fresh
      this.write(() => {
        // Started: later batches form the next write. A write run again (never today) runs the same batches.
        if (this.waiting === fresh) this.waiting = undefined
        return fresh.runs.map((r) => r())
      }).then(
        (results) => fresh.settle.forEach((s, i) => s.resolve(results[i])),
        (err: unknown) => fresh.settle.forEach((s) => s.reject(err)),
      )
    }
    const joined = w
    joined.runs.push(run)
    return new Promise<T>((resolve, reject) => joined.settle.push({ resolve: resolve as (v: unknown) => void, reject }))
  }
}
