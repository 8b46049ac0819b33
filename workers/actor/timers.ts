// The actor's clocks: one timer for the earliest due schedule of all its
// shards (scheduled and decay events), and retention once a minute.
import { now } from '../../src/core/clock'
import { eventsToPrune, pruneEvents } from '../store/events'
import { fireDue, nextDue } from '../store/schedules'
import { forgetUncommitted, type ShardStore } from '../store/shard-store'

const MAX_SLEEP_MS = 60_000
const PRUNE_EVERY_MS = 60_000

/**
 * A write transaction that is all or nothing: lmdb-js commits what a
 * transaction callback wrote before it threw; a child transaction is rolled
 * back instead.
 */
function atomically(store: ShardStore, fn: () => void): Promise<unknown> {
  return store.env.transaction(() => store.env.childTransaction(fn))
}

export interface Retention { maxAgeMs: number; maxCount: number }

export class Timers {
  private timer: NodeJS.Timeout | undefined
  private timerAt = Number.POSITIVE_INFINITY
  private readonly pruner: NodeJS.Timeout

  constructor(
    private readonly stores: readonly ShardStore[],
    private readonly retention: Retention,
    /** After scheduled events were appended and flushed. */
    private readonly eventsAppended: (store: ShardStore, tenants: Iterable<string>) => void,
    /** After each round of firing (the outbox goes out before the next sleep). */
    private readonly afterFiring: () => void,
    /**
     * Where the timers' writes go: cluster mode runs them only on the shards
     * this host serves, replicated (replication/start.ts); one host, through
     * the shard's journal (local-journal.ts).
     */
    private readonly writes?: { serves(store: ShardStore): boolean; write(store: ShardStore, fn: () => void): Promise<unknown> },
  ) {
    this.pruner = setInterval(() => this.prune(), PRUNE_EVERY_MS)
    this.pruner.unref()
  }

  /** (Re)arms the schedule timer for the earliest due schedule; schedules due while the server was down fire at once. */
  schedule(): void {
    let due = Number.POSITIVE_INFINITY
    for (const store of this.active()) due = Math.min(due, nextDue(store) ?? Number.POSITIVE_INFINITY)
    const at = Math.min(due, now() + MAX_SLEEP_MS)
    if (this.timer !== undefined && at >= this.timerAt) return
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - now()))
  }

  private active(): ShardStore[] {
    return this.writes === undefined ? [...this.stores] : this.stores.filter((s) => this.writes!.serves(s))
  }

  private write(store: ShardStore, fn: () => void): Promise<unknown> {
    return this.writes === undefined ? atomically(store, fn) : this.writes.write(store, fn)
  }

  stop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    clearInterval(this.pruner)
  }

  private fire(): void {
    this.timer = undefined
    this.timerAt = Number.POSITIVE_INFINITY
    const t = now()
    const work = this.active().map((store) => {
      let tenants = new Set<string>()
      return this.write(store, () => { tenants = fireDue(store, t) })
        .then(() => store.env.flushed)
        .then(() => this.eventsAppended(store, tenants), (err: unknown) => {
          forgetUncommitted(store)
          throw err
        })
    })
    void Promise.all(work).catch((err: unknown) => console.error('shard actor: firing schedules failed:', err)).finally(() => {
      this.afterFiring()
      this.schedule()
    })
  }

  private prune(): void {
    const cutoff = now() - this.retention.maxAgeMs
    for (const store of this.active()) {
      if (!eventsToPrune(store, cutoff, this.retention.maxCount)) continue
      void this.write(store, () => pruneEvents(store, cutoff, this.retention.maxCount))
        .catch((err: unknown) => {
          forgetUncommitted(store)
          console.error('shard actor: pruning events failed:', err)
        })
    }
  }
}
