// The shards an actor reads but does not own: every actor answers reads of
// every shard (docs/design/architecture.md, "Reads on every core"); only the owner
// writes. They are opened once the pool knows every owner has opened and
// migrated its shards, and never written (no migration, no key-file writes).
import type { ActorConfig } from '../../src/contract/messages'
import { forgetConsent } from '../store/consents'
import type { WrappingKeys } from '../../src/crypto/kek-file'
import { closeShard, openShard, type ShardStore } from '../store/shard-store'

export class Readers {
  private readonly stores = new Map<number, ShardStore>()

  /** `wrapping`: the master key, or in cluster mode the KEKs (they wrap the data keys). */
  constructor(private readonly config: ActorConfig, private readonly wrapping: Buffer | WrappingKeys) {}

  open(shards: readonly number[]): void {
    for (const shard of shards) {
      if (this.stores.has(shard)) continue
      this.stores.set(shard, openShard(this.config.dataDir, shard, this.wrapping, this.config.eventRetentionCount, true, this.config.cluster === undefined))
    }
  }

  shards(): Iterable<number> {
    return this.stores.keys()
  }

  get(shard: number): ShardStore | undefined {
    return this.stores.get(shard)
  }

  /**
   * Called at the start of every incoming message: lmdb-js keeps a thread's
   * read snapshot until a zero timeout fires, so a read arriving sooner
   * could miss a commit that was answered before it was sent. Renewing here
   * keeps read-your-writes across threads.
   */
  renew(): void {
    for (const store of this.stores.values()) store.env.resetReadTxn()
  }

  forgetConsent(shard: number, tenant: string, ref: string): void {
    const store = this.stores.get(shard)
    if (store === undefined) return
    store.env.resetReadTxn()
    forgetConsent(store, tenant, ref)
  }

  async close(): Promise<void> {
    for (const store of this.stores.values()) await closeShard(store)
    this.stores.clear()
  }
}
