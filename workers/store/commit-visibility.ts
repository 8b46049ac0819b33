// When an asynchronous transaction becomes visible to readers. With
// overlappingSync, LMDB makes a commit visible (its meta page written), lets
// the next transaction begin, and only then syncs; lmdb-js resolves the
// transaction's promise after that sync. Its write thread reports the
// visible moment to JavaScript as status 1 of `startWriting`'s callback,
// which lmdb-js 3.5 ignores: this hooks it (read in lmdb's write.js and
// src/writer.cpp, pinned in package-lock.json; test/store/commit-visibility.test.ts
// checks it against the pinned version).
// The local journal answers a write at that moment once its record is durable.
import type { RootDatabase } from 'lmdb'

type WriteCallback = (status: number) => unknown
interface NativeEnv {
  startWriting(address: number, callback: WriteCallback): unknown
}

/** The status the write thread sends once the transaction is visible (writer.cpp: progressStatus 1). */
const VISIBLE = 1
/** The status under which lmdb-js runs the queued transaction callbacks. */
const RUN_CALLBACKS = 2

interface Pending {
  visible: Promise<void>
  resolve: () => void
}

export class CommitVisibility {
  private running: Pending | undefined

  /** `onVisible`: what must follow a commit at once (the thread's read snapshot, write generations). */
  constructor(env: RootDatabase, onVisible: () => void) {
    const native = (env as unknown as { env: NativeEnv }).env
    const start = native.startWriting
    // The native method sits on the prototype, not writable there: an own property shadows it.
    Object.defineProperty(native, 'startWriting', {
      configurable: true,
      writable: true,
      value: (address: number, callback: WriteCallback): unknown => {
        let resolve!: () => void
        const pending: Pending = { visible: new Promise<void>((r) => { resolve = r }), resolve: () => resolve() }
        return start.call(native, address, (status: number) => {
          if (status === VISIBLE) {
            onVisible()
            pending.resolve()
          }
          if (status !== RUN_CALLBACKS) return callback(status)
          const outer = this.running
          this.running = pending
          try {
            return callback(status)
          } finally {
            this.running = outer
          }
        })
      },
    })
  }

  /** Called inside a transaction callback: resolves once that transaction is visible to every reader (never, if it fails). */
  ofRunningTransaction(): Promise<void> | undefined {
    return this.running?.visible
  }
}
