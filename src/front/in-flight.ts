// The HTTP exchanges not answered yet. A shutdown stops accepting, then
// waits (bounded) until these are answered before closing connections, so
// a client whose write was applied also gets its answer. While draining,
// every answer closes its connection, and work that would wait (a
// long-poll) is cut short through its drain hook.

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

/** Starts draining; resolves true when every exchange is answered, false when `timeoutMs` ran out first. */
export function drain(timeoutMs: number): Promise<boolean> {
  draining = true
  for (const hook of [...hooks]) hook()
  hooks.clear()
  if (open === 0) return Promise.resolve(true)
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      idle = undefined
      resolve(false)
    }, timeoutMs)
    idle = () => {
      clearTimeout(timer)
      idle = undefined
      resolve(true)
    }
  })
}
