// A write refused because this host does not serve its shard now (cluster
// mode: the lease ran out, another host claimed it, or the replicated stream
// refused the append): 503 with Retry-After, never a 500. `notRun`: refused
// before any of it ran, so the front may send it to the next owner.
export class ShardUnavailable extends Error {
  constructor(message: string, readonly retryAfter: number, readonly notRun = false) {
    super(message)
  }
}
