// A shard in a temporary directory with a random master key, and the
// ShardContext the actor would build for it (workers/shard-actor.ts), so
// the store's operations can be tested in-process, one by one. Writes run
// the way the actor runs them: inside one write transaction, answered once
// it is flushed, with revoked consents' key slots destroyed after that.
import type { Envelope } from './event-log'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { Metamodel, type MetamodelDoc } from '../../src/model/metamodel'
import { Urls } from '../../src/contract/urls'
import { deriveKey } from '../../src/crypto/master-key'
import type { NodeRef, RelationRef, Timing, WriteContext } from '../../src/contract/messages'
import { BlindIndex } from '../../workers/crypto/blind-index'
import { createConsent } from '../../workers/store/consents'
import type { ShardContext } from '../../workers/store/context'
import { head, readEvents } from '../../workers/store/events'
import type { OpResult } from '../../workers/store/result'
import { closeShard, openShard, type ShardStore } from '../../workers/store/shard-store'
import { webhookDb } from '../../workers/store/webhooks'

export const PUBLIC_URL = 'https://graph.test'

const str = (searchable = false) => ({ type: 'string' as const, searchable })
const int = (searchable = false) => ({ type: 'integer' as const, searchable })

/**
 * core/customer is customer-owned (name and age searchable), core/product
 * tenant-owned; viewed relations are customer-owned, listed ones
 * tenant-owned. Undeclared types are customer-owned.
 */
export const METAMODEL: MetamodelDoc = {
  '*': {
    nodes: {
      'core/customer': { owner: 'customer', open: true, properties: { name: str(true), age: int(true), email: str() } },
      'core/product': { owner: 'tenant', open: true, properties: { title: str(true) } },
    },
    relations: {
      'core/customer/core/product/core/viewed': { owner: 'customer', open: true, properties: { views: int() } },
      'core/product/core/product/core/listed': { owner: 'tenant', open: true, properties: {} },
    },
  },
}

export interface TempShard {
  store: ShardStore
  dir: string
  masterKey: Buffer
  urls: Urls
  metamodel: Metamodel
  blind: BlindIndex
  /** The key the actor seals webhook secrets with. */
  webhookKey: Buffer
  /** The time the next context gets, epoch ms: assign to move it. */
  clock: { time: number }
  /** A context at the clock's time, as the actor builds one per batch or read. */
  context(): ShardContext
  /** Runs `fn` in a write transaction and resolves once it is flushed and the revoked slots are destroyed. */
  write<T>(fn: (sc: ShardContext) => T): Promise<T>
  /** A new consent of the tenant (granted), its reference. */
  consent(tenant: string, subject?: string): Promise<string>
  /** Closes and opens the shard again with the same master key (what a restart sees), optionally with another count retention. */
  reopen(maxEventsPerTenant?: number): Promise<void>
}

export function tempShard(t: { teardown(fn: () => Promise<void>): void }, metamodelDoc: MetamodelDoc = METAMODEL, start = 1_700_000_000_000, maxEventsPerTenant = 1_000_000): TempShard {
  const dir = mkdtempSync(join(tmpdir(), 'temp-shard-'))
  const masterKey = randomBytes(32)
  const urls = new Urls(PUBLIC_URL)
  const metamodel = new Metamodel(metamodelDoc)
  const blind = new BlindIndex(masterKey)
  const clock = { time: start }
  const shard: TempShard = {
    store: openShard(dir, 0, masterKey, maxEventsPerTenant),
    dir, masterKey, urls, metamodel, blind, clock,
    webhookKey: deriveKey(masterKey, 'webhook secrets'),
    context() {
      return { store: shard.store, urls, metamodel, blind, now: clock.time, touched: new Set(), schedulesChanged: false, shred: [] }
    },
    async write<T>(fn: (sc: ShardContext) => T): Promise<T> {
      const sc = shard.context()
      const result = await shard.store.env.transaction(() => fn(sc))
      await shard.store.env.flushed
      for (const slot of sc.shred) shard.store.keys.destroy(slot)
      return result
    },
    async consent(tenant, subject = 'user-1') {
      const r = await shard.write((sc) => createConsent(sc.store, tenant, subject, sc.now))
      return (bodyOf(r) as { consentReference: string }).consentReference
    },
    async reopen(max = shard.store.maxEventsPerTenant) {
      await closeShard(shard.store)
      shard.store = openShard(dir, 0, masterKey, max)
    },
  }
  webhookDb(shard.store)
  t.teardown(async () => {
    await closeShard(shard.store).catch(() => undefined)
    rmSync(dir, { recursive: true, force: true })
  })
  return shard
}

/** The parsed body of a successful result; throws with the error otherwise. */
export function bodyOf(r: OpResult): unknown {
  if (r.kind !== 'ok') throw new Error(`expected ok, got ${r.type}: ${r.message}`)
  if (r.body === undefined) throw new Error(`expected a body, got status ${r.status} without one`)
  return JSON.parse(r.body) as unknown
}

/** The status of a success or the type of an error: what most assertions compare. */
export function outcome(r: OpResult): number | string {
  return r.kind === 'ok' ? r.status : r.type
}

export function writeCtx(consent: string, more: { client?: string; trace?: string; schedule?: Timing; decay?: Timing } = {}): WriteContext {
  return { consent, client: more.client ?? 'client-1', trace: more.trace, schedule: more.schedule, decay: more.decay }
}

export const customer = (id: string): NodeRef => ({ ns: 'core', type: 'customer', id })
export const product = (id: string): NodeRef => ({ ns: 'core', type: 'product', id })
export const viewed = (from: string, to: string, id = 'r1'): RelationRef => ({ from: customer(from), to: product(to), rel: { ns: 'core', type: 'viewed', id } })
export const listed = (from: string, to: string, id = 'r1'): RelationRef => ({ from: product(from), to: product(to), rel: { ns: 'core', type: 'listed', id } })
/** An undeclared (customer-owned) relation type between any two nodes. */
export const knows = (from: NodeRef, to: NodeRef, id = 'r1'): RelationRef => ({ from, to, rel: { ns: 'core', type: 'knows', id } })


/** Every event of the tenant's log still kept, oldest first. */
export function eventsOf(store: ShardStore, tenant: string): Envelope[] {
  const r = readEvents(store, tenant, head(store, tenant).first - 1, 1_000_000)
  if (r.kind !== 'events') throw new Error(`events up to ${r.first - 1} are pruned`)
  return r.events.map((e) => JSON.parse(e) as Envelope)
}
