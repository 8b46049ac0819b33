// The piscina pools' queues (scrypt: src/auth/helpers/password-hasher.ts;
// signing: src/auth/helpers/signing-pool.ts): tasks waiting for a thread,
// read at scrape time, and how long each waited. Both pools hand piscina a
// task only when a thread is free, so the wait is theirs to measure.
import { Gauge, Histogram } from 'prom-client'
import { registry } from './metrics'

export type PoolName = 'scrypt' | 'signing'

const WAIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** The pool each name stands for now (the last one made: a test may make several). */
const depths = new Map<PoolName, () => number>()

new Gauge({
  name: 'worker_pool_queued_tasks', help: 'Tasks waiting for a worker thread of a piscina pool, by pool (scrypt, signing)', labelNames: ['pool'] as const, registers: [registry],
  collect() {
    for (const [pool, depth] of depths) this.labels(pool).set(depth())
  },
})

const waitSeconds = new Histogram({ name: 'worker_pool_wait_seconds', help: 'Time a task waited for a worker thread of a piscina pool, by pool (scrypt, signing)', labelNames: ['pool'] as const, buckets: WAIT_BUCKETS, registers: [registry] })

/** Reports the pool's queue at each scrape until the returned function is called (its close). */
export function reportQueueDepth(pool: PoolName, depth: () => number): () => void {
  depths.set(pool, depth)
  return () => {
    if (depths.get(pool) === depth) depths.delete(pool)
  }
}

export function taskWaited(pool: PoolName, seconds: number): void {
  waitSeconds.labels(pool).observe(seconds)
}
