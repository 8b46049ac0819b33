// Cluster mode's hook into the actor pool (src/cluster/forwarding.ts fills
// it): a shard this host does not serve now is answered by its owner.
import type { Operation, StreamOp } from '../contract/messages'
import type { ReplyHandler, StreamHandle } from './reply-handler'

export interface RemoteShards {
  /** Whether `shard` is served elsewhere now (this host holds no valid lease on it). */
  elsewhere(shard: number): boolean
  call(shard: number, tenant: string, operation: Operation, handler: ReplyHandler): void
  openStream(shard: number, tenant: string, operation: StreamOp, handler: ReplyHandler): StreamHandle
}
