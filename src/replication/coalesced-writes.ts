// Writes to a replicated unit, joined while they wait (docs/design/replication.md,
// "The replicated log"): the replica appends one write at a time, each a NATS
// round trip, an LMDB commit and a flush. Without joining, every write
// handed over while one was under way waited for its own turn, so 128
// concurrent writers got the rate of one sequential writer. Here every write
// that arrives while the replica is busy joins the next replicated write:
// their callbacks run one after another in its one recorded transaction (as
// lmdb-js runs queued transactions together on one machine), so they cost
// one append, one commit and one flush together. A shard's writes are its
// group-commit batches (workers/actor/replication/start.ts); the auth
// store's are its models' writes, each isolated in a child transaction
// (src/cluster/auth-batches.ts).

/** The replica's write: `run` inside a recorded transaction, appended, then committed (src/replication/replica.ts). */
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
      // Later batches form the next write once this one starts, or once it is settled without running (the
      // replica refuses a write while it does not serve the shard): a settled write must take no more batches.
      const detach = (): void => { if (this.waiting === fresh) this.waiting = undefined }
      this.write(() => {
        detach()
        return fresh.runs.map((r) => r())
      }).then(
        (results) => { detach(); fresh.settle.forEach((s, i) => s.resolve(results[i])) },
        (err: unknown) => { detach(); fresh.settle.forEach((s) => s.reject(err)) },
      )
    }
    const joined = w
    joined.runs.push(run)
    return new Promise<T>((resolve, reject) => joined.settle.push({ resolve: resolve as (v: unknown) => void, reject }))
  }
}
