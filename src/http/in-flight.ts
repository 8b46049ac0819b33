// The HTTP exchanges not answered yet. A shutdown stops accepting, then
// waits (bounded) until these are answered before closing connections, so
// a client whose write was applied also gets its answer. While draining,
// every answer closes its connection, and work that would wait (a
// long-poll) is cut short through its drain hook.

/** How long a drain waits with nothing in flight before it calls the server idle. */
const QUIET_MS = 250

let open = 0
let draining = false
let idle: (() => void) | undefined
const hooks = new Set<() => void>()

export function exchangeStarted(): void {
  open++
}

export function exchangeEnded(): void {
  open--
  if (open === 0) idle?.()
}

export function inFlight(): number {
  return open
}

export function isDraining(): boolean {
  return draining
}

/** `hook` runs once if a drain starts while it is registered; the returned function unregisters it. */
export function onDrain(hook: () => void): () => void {
  if (draining) {
    queueMicrotask(hook)
    return () => {}
  }
  hooks.add(hook)
  return () => { hooks.delete(hook) }
}

/**
 * Starts draining; resolves true once no exchange has been open for QUIET_MS
 * (a request already on its way over a kept-alive connection gets its 503
 * rather than a reset), false when `timeoutMs` ran out first.
 */
export function drain(timeoutMs: number): Promise<boolean> {
  draining = true
  for (const hook of [...hooks]) hook()
  hooks.clear()
  return new Promise((resolve) => {
    let quiet: NodeJS.Timeout | undefined
    const done = (result: boolean): void => {
      clearTimeout(deadline)
      clearTimeout(quiet)
      idle = undefined
      resolve(result)
    }
    const deadline = setTimeout(() => done(false), timeoutMs)
    const waitQuiet = (): void => {
      clearTimeout(quiet)
      quiet = setTimeout(() => { if (open === 0) done(true) }, Math.min(QUIET_MS, timeoutMs))
    }
    idle = waitQuiet
    if (open === 0) waitQuiet()
  })
}
