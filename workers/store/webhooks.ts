// The webhooks of the tenants of one shard (docs/design/contracts.md, Events). Each holds its
// signing secret sealed (AES-256-GCM) under a key derived from the master
// key, with the tenant and id as additional data, and its delivery state:
// the cursor of the last event the receiver acknowledged, since when it has
// been failing, and whether it is suspended. Delivery itself runs on the
// front thread (src/events/webhook-delivery.ts) and reports back here.
import { randomBytes } from 'node:crypto'
import type { Database, RangeOptions } from 'lmdb'
import type { WebhookState, WebhookTarget } from '../../src/contract/messages'
import { open, seal } from '../crypto/seal'
import { head } from './events'
import { prefixRange, tenantPrefix, webhookKey, webhookOf, type Key } from './keys'
import { NO_CONTENT, fail, ok, type OpResult } from './result'
import type { WebhookRecord } from './schema'
import { DB_OPTIONS, type ShardStore } from './shard-store'

/** Registered webhooks per tenant, at most. */
export const MAX_WEBHOOKS_PER_TENANT = 100

const dbs = new WeakMap<ShardStore, Database<WebhookRecord, Key>>()

/** The shard's `webhooks` database (opened on first use; the actor opens it at start). */
export function webhookDb(store: ShardStore): Database<WebhookRecord, Key> {
  let db = dbs.get(store)
  if (db === undefined) {
    db = store.env.openDB<WebhookRecord, Key>('webhooks', DB_OPTIONS)
    dbs.set(store, db)
  }
  return db
}

const aad = (tenant: string, id: string): string => JSON.stringify(['webhook secret', tenant, id])

function tenantRange(tenant: string): RangeOptions {
  return prefixRange(tenantPrefix(tenant))
}

function view(id: string, w: WebhookRecord): Record<string, unknown> {
  return { id, url: w.url, created: w.created, cursor: w.cursor, failingSince: w.failingSince, suspended: w.suspended, lastError: w.lastError }
}

const notFound = (id: string): OpResult => fail('element_not_found', `webhook "${id}" not found`)

/** Registers a webhook (inside the write transaction); it gets the events appended after this point. */
export function createWebhook(store: ShardStore, sealKey: Buffer, tenant: string, url: string, now: number): OpResult {
  const db = webhookDb(store)
  if (db.getKeysCount(tenantRange(tenant)) >= MAX_WEBHOOKS_PER_TENANT) {
    return fail('bad_request', `a tenant may register at most ${MAX_WEBHOOKS_PER_TENANT} webhooks; delete one first`)
  }
  const id = `wh_${randomBytes(12).toString('base64url')}`
  // 256 random bits; the receiver uses this text as the HMAC key.
  const secret = randomBytes(32).toString('hex')
  const record: WebhookRecord = {
    url, secret: seal(sealKey, secret, aad(tenant, id)), created: now,
    cursor: head(store, tenant).last, failingSince: null, suspended: false, lastError: null,
  }
  db.putSync(webhookKey(tenant, id), record)
  return ok(201, JSON.stringify({ id, url, secret }))
}

export function deleteWebhook(store: ShardStore, tenant: string, id: string): OpResult {
  const db = webhookDb(store)
  if (db.get(webhookKey(tenant, id)) === undefined) return notFound(id)
  db.removeSync(webhookKey(tenant, id))
  return NO_CONTENT
}

/** The tenant's webhooks (or the one with `id`), without their secrets. */
export function listWebhooks(store: ShardStore, tenant: string, id: string | undefined): OpResult {
  const db = webhookDb(store)
  if (id !== undefined) {
    const w = db.get(webhookKey(tenant, id))
    return w === undefined ? notFound(id) : ok(200, JSON.stringify(view(id, w)))
  }
  const list: Record<string, unknown>[] = []
  for (const { key, value } of db.getRange(tenantRange(tenant))) list.push(view(webhookOf(key).id, value))
  return ok(200, JSON.stringify(list))
}

/** Records a delivery attempt's outcome; the cursor never moves back. */
export function saveWebhookState(store: ShardStore, tenant: string, id: string, state: WebhookState): OpResult {
  const db = webhookDb(store)
  const w = db.get(webhookKey(tenant, id))
  if (w === undefined) return notFound(id)
  db.putSync(webhookKey(tenant, id), { ...w, ...state, cursor: Math.max(w.cursor, state.cursor) })
  return NO_CONTENT
}

/** Webhooks with their secrets opened, for delivery: one tenant's, or every tenant's of the shard. */
export function webhookTargets(store: ShardStore, sealKey: Buffer, tenant: string | undefined): OpResult {
  const targets: WebhookTarget[] = []
  for (const { key, value: w } of webhookDb(store).getRange(tenant === undefined ? {} : tenantRange(tenant))) {
    const { tenant: t, id } = webhookOf(key)
    const secret = open(sealKey, w.secret, aad(t, id))
    if (secret === undefined) {
      console.error(`shard ${store.shard}: the secret of webhook ${id} of tenant ${t} does not open; it is not delivered`)
      continue
    }
    targets.push({
      tenant: t, id, url: w.url, secret: secret.toString(),
      cursor: w.cursor, failingSince: w.failingSince, suspended: w.suspended, lastError: w.lastError,
    })
  }
  return ok(200, JSON.stringify(targets))
}

/** A master-key rotation: every webhook secret sealed again under the new derived key (inside a write transaction). */
export function resealWebhookSecrets(store: ShardStore, oldKey: Buffer, newKey: Buffer): void {
  const db = webhookDb(store)
  for (const { key, value } of [...db.getRange()]) {
    const { tenant, id } = webhookOf(key)
    const secret = open(oldKey, value.secret, aad(tenant, id))
    if (secret === undefined) throw new Error(`the secret of webhook ${id} of tenant ${tenant} does not open with the current master key`)
    db.putSync(key, { ...value, secret: seal(newKey, secret, aad(tenant, id)) })
  }
}
