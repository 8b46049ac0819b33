// Which actor answers a tenant's call: the owner of the tenant's shard on
// this host, the host that owns it (cluster mode, through RemoteShards), or
// for a read the least busy actor that has the shard open.
import type { Operation } from '../contract/messages'
import type { ActorHandle } from './actor-handle'
import { leastLoaded, readsAnywhere } from './read-routing'
import type { RemoteShards } from './remote-shards'
import { actorOf, shardOf } from './tenant-hash'

export class ShardRouter {
  /** Cluster mode: where the shards this host does not own are answered; undefined on one machine. */
  remote: RemoteShards | undefined
  private turn = 0
  /** Reused per read (no allocation per request): each actor's calls in flight, Infinity where it cannot read. */
  private readonly loads: number[] = []

  /** `readAnywhere`: reads may go to any actor (not in cluster mode: the other threads' consent caches do not see what a standby applied). */
  constructor(private readonly actors: readonly ActorHandle[], private readonly shardCount: number, private readonly readAnywhere: boolean) {}

  /** The shard that holds the tenant's data. */
  shardOf(tenant: string): number {
    return shardOf(tenant, this.shardCount)
  }

  /** Where the shard is answered when another host owns it now; undefined when this host's actors answer it. */
  remoteOf(shard: number): RemoteShards | undefined {
    const remote = this.remote
    return remote?.elsewhere(shard) === true ? remote : undefined
  }

  /** The actor of this host that owns (writes) the shard. */
  owner(shard: number): ActorHandle {
    return this.actors[actorOf(shard, this.actors.length)]!
  }

  /** The actor that answers a call of the owner's shard: a reader for a read (on one machine), the owner otherwise. */
  forCall(owner: ActorHandle, operation: Operation): ActorHandle {
    return this.readAnywhere && readsAnywhere(operation) ? this.reader(owner) : owner
  }

  /**
   * The actor that answers a read of a shard: the least busy of those that
   * can (the owner, and every running actor that opened the shard for
   * reading); the owner alone when it is stopped, so the read gets its 503.
   */
  reader(owner: ActorHandle): ActorHandle {
    if (owner.stopped !== undefined) return owner
    const { actors, loads } = this
    for (let i = 0; i < actors.length; i++) {
      const a = actors[i]!
      loads[i] = a === owner || (a.readersOpen && a.stopped === undefined) ? a.pending.size : Number.POSITIVE_INFINITY
    }
    this.turn = (this.turn + 1) % actors.length
    return actors[leastLoaded(loads, this.turn)]!
  }
}
