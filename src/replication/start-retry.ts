// A cluster's first JetStream calls of a host (opening or creating a stream,
// a bucket), tried again for a while: on a JetStream cluster that has just
// formed, or while NATS servers restart, they time out while leaders are
// elected, and a host that gave up would not start (or, an actor, would never
// serve its shards).

/** How long a start step is tried before its error is the host's. */
const TRY_FOR_MS = 60_000

/** `step` until it resolves, for `forMs` at most (Infinity: until it works or the connection closes); `retrying` hears each failure tried again. */
export async function untilItWorks<T>(step: () => Promise<T>, closed: () => boolean, forMs = TRY_FOR_MS, retrying: (attempt: number, err: unknown) => void = () => undefined): Promise<T> {
  const until = Date.now() + forMs
  for (let attempt = 1; ; attempt++) {
    try {
      return await step()
    } catch (err) {
      if (closed() || Date.now() > until) throw err
      retrying(attempt, err)
      await new Promise((r) => setTimeout(r, Math.min(2000, 250 * attempt)))
    }
  }
}
