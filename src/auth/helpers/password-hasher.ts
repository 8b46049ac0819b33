// The front thread's handle on the piscina pool that runs scrypt. Checks
// wait in lanes (one per account; the server's own work shares one) served
// in turn, one check per lane, so a flood at one account delays another
// account's check by about one check, not by the whole flood. A check for a
// new lane is refused (503 + Retry-After) when the lanes already waiting
// would hold it past WAIT_BUDGET_MS: failing fast beats a long queue. The
// attempt limiter (attempt-limiter.ts) keeps each lane short before that.
import { Piscina } from 'piscina'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../../core/errors'
import { SCRYPT_PARAMS, type PasswordTask, type ScryptHash } from '../../../workers/crypto/password-hash'
import { reportQueueDepth, taskWaited } from '../../telemetry/pool-metrics'
import { traceTask } from '../../telemetry/traces'

export type { ScryptHash }

/** The compiled scrypt worker, from dist/src/auth/helpers/. */
export const PASSWORD_WORKER = join(__dirname, '..', '..', '..', 'workers', 'crypto', 'password-hash.js')

/** The lane of the server's own hashing (bootstrap, admin API): never refused. */
export const INTERNAL_LANE = ''
/** A new lane should start within about this many ms (enough for a burst of a few dozen clients starting at once; an attack is held by the attempt limiter first). */
const WAIT_BUDGET_MS = 3000
/** Checks one account may have waiting (the attempt limiter keeps it lower). */
const MAX_PER_LANE = 64
/** First guess of one check's duration, until measured. */
const INITIAL_CHECK_MS = 250

/** Whether a stored hash was made with weaker settings than today's (then it is made again). */
export function weakerThanCurrent(stored: ScryptHash): boolean {
  return stored.N * stored.p < SCRYPT_PARAMS.N * SCRYPT_PARAMS.p || stored.r < SCRYPT_PARAMS.r
}

interface Waiting {
  task: PasswordTask
  /** performance.now() when it was asked for */
  asked: number
  resolve: (value: unknown) => void
  reject: (err: unknown) => void
}

/** A check's span (traces on), from its turn in the lanes to its answer. */
const SPAN_ATTRIBUTES = { 'profile_graph.pool': 'scrypt' }

const busy = (): ApiError => new ApiError('service_unavailable', 'too many password checks are waiting; retry shortly', { headers: { 'retry-after': '1' } })

export class PasswordHasher {
  private readonly pool: Piscina
  private readonly threads: number
  /** lane -> its waiting checks; Map order is the turn order */
  private readonly lanes = new Map<string, Waiting[]>()
  private running = 0
  /** moving average of a check's duration, ms */
  private checkMs = INITIAL_CHECK_MS
  private readonly unreport: () => void

  constructor(
    filename = PASSWORD_WORKER,
    threads = Math.max(1, Math.min(4, availableParallelism())),
    private readonly waitBudgetMs = WAIT_BUDGET_MS,
  ) {
    this.threads = threads
    this.pool = new Piscina({ filename, minThreads: 0, maxThreads: threads, idleTimeout: 30_000 })
    this.unreport = reportQueueDepth('scrypt', () => this.waitingChecks())
  }

  private waitingChecks(): number {
    let n = 0
    for (const queue of this.lanes.values()) n += queue.length
    return n
  }

  /** How many other lanes may wait before a new one: those it would wait for fit the budget (at least two per thread). */
  private maxWaitingLanes(): number {
    return Math.max(2 * this.threads, Math.floor((this.waitBudgetMs * this.threads) / this.checkMs) - 1)
  }

  private run<T>(task: PasswordTask, lane: string): Promise<T> {
    const queue = this.lanes.get(lane)
    if (lane !== INTERNAL_LANE) {
      if (queue === undefined && this.running >= this.threads && this.waitingLanes() >= this.maxWaitingLanes()) return Promise.reject(busy())
      if (queue !== undefined && queue.length >= MAX_PER_LANE) return Promise.reject(busy())
    }
    return new Promise<T>((resolve, reject) => {
      const waiting: Waiting = { task, asked: performance.now(), resolve: resolve as (value: unknown) => void, reject }
      if (queue === undefined) this.lanes.set(lane, [waiting])
      else queue.push(waiting)
      this.next()
    })
  }

  private waitingLanes(): number {
    let n = this.lanes.size
    // The internal lane is not anyone's delay budget.
    if (this.lanes.has(INTERNAL_LANE)) n--
    return n
  }

  /** Starts the first check of the lane whose turn it is; the lane goes to the back. */
  private next(): void {
    while (this.running < this.threads && this.lanes.size > 0) {
      const [lane, queue] = this.lanes.entries().next().value as [string, Waiting[]]
      const w = queue.shift()!
      this.lanes.delete(lane)
      if (queue.length > 0) this.lanes.set(lane, queue)
      this.running++
      const started = performance.now()
      taskWaited('scrypt', (started - w.asked) / 1000)
      // The slot is free (and the next check started) before the caller hears the answer.
      this.pool.run(w.task).then(
        (value: unknown) => {
          // One slow sample (a cold worker thread starting) moves the estimate by at most 20%.
          this.checkMs = this.checkMs * 0.8 + Math.min(performance.now() - started, 2 * this.checkMs) * 0.2
          this.running--
          this.next()
          w.resolve(value)
        },
        (err: unknown) => {
          this.running--
          this.next()
          w.reject(err)
        },
      )
    }
  }

  hash(secret: string): Promise<ScryptHash> {
    return traceTask('scrypt hash', SPAN_ATTRIBUTES, () => this.run({ op: 'hash', secret }, INTERNAL_LANE))
  }

  /** `lane`: the account checked (so floods at one account wait behind each other); the internal lane by default. */
  verify(secret: string, stored: ScryptHash, lane = INTERNAL_LANE): Promise<boolean> {
    return traceTask('scrypt verify', SPAN_ATTRIBUTES, () => this.run({ op: 'verify', secret, stored }, lane))
  }

  async close(): Promise<void> {
    this.unreport()
    for (const queue of this.lanes.values()) for (const w of queue) w.reject(busy())
    this.lanes.clear()
    await this.pool.destroy()
  }
}
