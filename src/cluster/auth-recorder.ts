// The seam of the auth store's replication (docs/manual/cluster.md, "The
// authorization service"). The auth models write on the front thread with
// lmdb-js's async puts, removes and transactions; in cluster mode this wraps
// those calls once, on every host:
// - a write issued outside a batch is handed to `outside` (auth-batches.ts),
//   which runs it later inside a replicated batch, and its promise settles
//   when that batch is appended and committed (or refused: a 503);
// - inside a batch (between start() and take()) every put and remove is
//   recorded, in order, as the value the store writes, and done in the batch's
//   transaction, which the replica rolls back, appends and then applies
//   (src/replication/replica.ts).
// A standby applies the stream with the raw calls kept here, never recorded.
import type { Database, RootDatabase } from 'lmdb'
import type { AuthStore } from '../auth/models/auth-store'
import { EffectRecording, type EffectKey } from '../replication/effects'

type Writer = (key: EffectKey, ...rest: unknown[]) => unknown

/** The calls a standby applies with: the originals, not recorded. */
export interface RawWrites {
  readonly db: Database<unknown, EffectKey>
  put(key: EffectKey, value: unknown): unknown
  remove(key: EffectKey): unknown
}

/** The environment calls the replica runs and commits batches with (the originals, never handed to `outside`). */
export type RawEnv = Pick<RootDatabase, 'transaction' | 'transactionSync' | 'childTransaction' | 'flushed'>

/** Every database of the auth store by its name in AuthStore: one added there is replicated without a list to forget. */
export function authDatabases(store: AuthStore): Map<string, Database<unknown, EffectKey>> {
  const dbs = new Map<string, Database<unknown, EffectKey>>()
  for (const [name, value] of Object.entries(store)) {
    if (name !== 'env' && typeof (value as { putSync?: unknown } | null)?.putSync === 'function') dbs.set(name, value as Database<unknown, EffectKey>)
  }
  return dbs
}

/** A rejection nobody awaits (a `void put()` refused for want of the lease) must not be reported as unhandled: its caller's durable() reports it. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined)
  return promise
}

export class AuthRecorder extends EffectRecording {
  readonly raw = new Map<string, RawWrites>()
  readonly env: RawEnv
  /** Where a write issued outside a batch goes (set by the batches); until then, refused. */
  outside: <T>(write: () => T) => Promise<T> = () => Promise.reject(new Error('the auth store is not replicated yet'))

  constructor(readonly store: AuthStore) {
    super()
    const env = store.env
    this.env = {
      transaction: env.transaction.bind(env),
      transactionSync: env.transactionSync.bind(env),
      childTransaction: env.childTransaction.bind(env),
      get flushed() { return env.flushed },
    } as RawEnv
    for (const [name, db] of authDatabases(store)) this.wrap(name, db)
    env.transaction = (<T>(fn: () => T): Promise<T> | T => (this.effects === undefined ? handled(this.outside(fn)) : fn())) as typeof env.transaction
  }

  private wrap(name: string, db: Database<unknown, EffectKey>): void {
    const put = db.put.bind(db) as Writer
    const remove = db.remove.bind(db) as Writer
    const putSync = db.putSync.bind(db) as Writer
    const removeSync = db.removeSync.bind(db) as Writer
    this.raw.set(name, { db, put: (key, value) => put(key, value), remove: (key) => remove(key) })
    // lmdb-js's putSync and removeSync call the instance's put and remove inside a transaction: recorded once, there.
    db.put = ((key: EffectKey, value: unknown, ...rest: unknown[]) => {
      if (this.effects === undefined) return handled(this.outside(() => db.put(key, value, ...(rest as []))))
      this.effects.push({ db: name, key, value })
      return put(key, value, ...rest)
    }) as typeof db.put
    db.remove = ((key: EffectKey, ...rest: unknown[]) => {
      if (this.effects === undefined) return handled(this.outside(() => db.remove(key, ...(rest as []))))
      this.effects.push({ db: name, key, removed: true })
      return remove(key, ...rest)
    }) as typeof db.remove
    db.putSync = ((key: EffectKey, ...rest: unknown[]) => {
      if (this.effects === undefined) throw new Error(`cluster mode: the auth store's ${name} is written with putSync outside a transaction`)
      return putSync(key, ...rest)
    }) as typeof db.putSync
    db.removeSync = ((key: EffectKey, ...rest: unknown[]) => {
      if (this.effects === undefined) throw new Error(`cluster mode: the auth store's ${name} is written with removeSync outside a transaction`)
      return removeSync(key, ...rest)
    }) as typeof db.removeSync
  }
}
