// One counter per shard, in memory every actor thread shares (the pool makes
// it: ActorConfig.writeGenerations), raised by the shard's one writer after
// each commit. A reader that sees a shard's counter unchanged knows the shard
// holds exactly what it held when the counter last had that value, without
// reading it: that is what lets a whole neighbourhood be served from memory
// (kept-reads.ts) and be dropped as soon as anything is written.
import type { RootDatabase } from 'lmdb'

/** A thread with no pool (a tool, a bench, a unit test) counts for itself. */
let cells: Int32Array = new Int32Array(new SharedArrayBuffer(4 * 1024))

/** The actor thread's start: the pool's counters, shared with every other actor. */
export function useWriteGenerations(shared: Int32Array): void {
  cells = shared
}

export function writeGeneration(shard: number): number {
  return Atomics.load(cells, shard)
}

/** Anything lmdb-js commits outside a transaction of the environment goes through a database's `transactionSync`. */
interface SyncCommits {
  transactionSync<T>(callback: () => T, flags?: number): T
}

/**
 * Makes every commit of the writer's environment raise the shard's counter
 * once it is visible: lmdb-js's `aftercommit` for asynchronous transactions
 * (it fires before the transaction's promise resolves, so before any write
 * of it is answered), and a wrapper of each `transactionSync` (the
 * environment's and each database's: a `putSync` outside a transaction runs
 * in one), which lmdb-js does not announce. An aborted transaction raises it
 * too: a needless miss, never a stale hit. Opening the shard raises it once.
 * `committed` runs after each raise, in the writer's thread (which drops what
 * it kept of the shard at once, not at its next message).
 */
export function countCommits(shard: number, env: RootDatabase, databases: readonly object[], committed: () => void): void {
  const bump = (): void => {
    Atomics.add(cells, shard, 1)
    committed()
  }
  // A writer that died between a commit and its count (a killed actor, restarted) left a commit uncounted.
  bump()
  env.on('aftercommit', bump)
  for (const target of [env, ...databases] as unknown as SyncCommits[]) {
    const sync = target.transactionSync.bind(target)
    target.transactionSync = <T>(callback: () => T, flags?: number): T => {
      let result: T
      try {
        result = sync(callback, flags)
      } catch (err) {
        bump()
        throw err
      }
      // A callback that returns a promise is committed when it settles.
      if (result instanceof Promise) void result.finally(() => bump()).catch(() => undefined)
      else bump()
      return result
    }
  }
}
