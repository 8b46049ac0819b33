// Cluster mode's hook into the actor pool (src/cluster/forwarding.ts fills
// it): a call is answered by its shard's owner, this host or another; a
// stream of a shard this host does not serve now, by its owner.
import type { Operation, StreamOp } from '../contract/messages'
import type { ReplyHandler, StreamHandle } from './reply-handler'

export interface RemoteShards {
  /** Whether `shard` is served elsewhere now (this host holds no valid lease on it). */
  elsewhere(shard: number): boolean
  /** Every call of a cluster host: its shard's owner answers it (this host's actors, another host, or the next owner after a hand-over). */
  call(shard: number, tenant: string, operation: Operation, handler: ReplyHandler): void
  openStream(shard: number, tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle
}
