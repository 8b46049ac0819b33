// A write refused because this host does not serve its shard now (cluster
// mode: the lease ran out, another host claimed it, or the replicated stream
// refused the append): 503 with Retry-After, never a 500.
export class ShardUnavailable extends Error {
  constructor(message: string, readonly retryAfter: number) {
    super(message)
  }
}
