// Waiting, one way for the benchmarks and the tests: a pause, and polling
// until a condition holds (tests wait for a state, never a fixed time alone).

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Polls `ok` every `everyMs` until it holds, and resolves with how long that took (ms); throws naming `what` after `ms`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000, everyMs = 20): Promise<number> {
  const started = Date.now()
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what} (${ms} ms)`)
    await sleep(everyMs)
  }
  return Date.now() - started
}
