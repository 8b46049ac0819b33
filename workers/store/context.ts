// What a store operation runs with: the shard, the models it checks writes
// against, the time of its transaction, and what the transaction collects
// for the actor to act on once it is committed.
import type { Metamodel } from '../../src/model/metamodel'
import type { Urls } from '../../src/contract/urls'
import type { BlindIndex } from '../crypto/blind-index'
import type { ShardStore } from './shard-store'

export interface ShardContext {
  store: ShardStore
  urls: Urls
  metamodel: Metamodel
  blind: BlindIndex
  now: number
  /** Tenants whose event log grew in this transaction (to wake their consumers). */
  touched: Set<string>
  /** Set when this transaction wrote a schedule (the actor's timer may need to fire sooner). */
  schedulesChanged: boolean
  /** Key slots of consents revoked in this transaction: destroyed once it is committed (consents.ts says why). */
  shred: number[]
}
