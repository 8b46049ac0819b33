// One shard in cluster mode, on one host: the generic replica
// (src/replication/replica.ts) over the shard's store, its recorder and its
// apply, which also destroys the key slots of consents revoked by an entry.
import { shardLeaseKey } from '../../../src/contract/cluster-names'
import { Replica, type UnitHost } from '../../../src/replication/replica'
import { forgetUncommitted, type ShardStore } from '../../store/shard-store'
import { ShardUnavailable } from '../../store/unavailable'
import { applyEffects, appliedSequence } from './apply'
import type { Recorder } from './recorder'
import type { ShardLog } from './shard-log'

export interface ReplicaHost extends Omit<UnitHost, 'ownership' | 'unavailable'> {
  /** Told whenever this host starts or stops serving the shard. */
  ownership(shard: number, owned: boolean, epoch: number): void
  /** Destroys key slots of consents revoked by applied entries, once durable (shred log first). */
  destroyKeys(store: ShardStore, slots: number[]): void
}

export class ShardReplica extends Replica {
  constructor(readonly store: ShardStore, log: ShardLog, recorder: Recorder, host: ReplicaHost) {
    super({
      name: `shard ${store.shard}`, id: String(store.shard), leaseKey: shardLeaseKey(store.shard), env: store.env, recorder,
      appliedSequence: () => appliedSequence(store),
      apply: (effects, sequence) => {
        const revoked = applyEffects(recorder, effects, sequence)
        return () => { if (revoked.length > 0) host.destroyKeys(store, revoked) }
      },
      forget: () => forgetUncommitted(store),
    }, log, {
      ...host,
      ownership: (owned, epoch) => host.ownership(store.shard, owned, epoch),
      unavailable: (message, retryAfter) => new ShardUnavailable(message, retryAfter),
    })
  }

  get shard(): number {
    return this.store.shard
  }
}
