// What must happen however the run ends (error, Ctrl-C): stop the child
// processes the bench started and remove its temp directories.
type Cleanup = () => Promise<void> | void

const cleanups = new Set<Cleanup>()

/** Registers a cleanup; returns a function that unregisters it (once it ran normally). */
export function onCleanup(fn: Cleanup): () => void {
  cleanups.add(fn)
  return () => { cleanups.delete(fn) }
}

/** Runs every registered cleanup, most recent first. */
export async function runCleanups(): Promise<void> {
  const all = [...cleanups].reverse()
  cleanups.clear()
  for (const fn of all) {
    try {
      await fn()
    } catch (err) {
      console.error('cleanup failed:', err)
    }
  }
}

/** On SIGINT/SIGTERM: clean up, then exit 130. */
export function cleanUpOnSignals(): void {
  let done = false
  const handler = (signal: string): void => {
    if (done) return
    done = true
    console.error(`${signal}: stopping the processes the bench started`)
    void runCleanups().finally(() => process.exit(130))
  }
  process.on('SIGINT', () => handler('SIGINT'))
  process.on('SIGTERM', () => handler('SIGTERM'))
}

/** A bench command's entry: cleans up on signals and on a thrown error, exits with main's code. */
export function runMain(main: () => Promise<number>): void {
  cleanUpOnSignals()
  main().then((code) => process.exit(code), (err: unknown) => {
    console.error(err instanceof Error ? err.stack ?? err.message : err)
    void runCleanups().finally(() => process.exit(1))
  })
}
