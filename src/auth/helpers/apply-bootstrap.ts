// Applies the authorization part of the bootstrap file: idempotent upserts of
// tenants, packages, subscriptions, clients, roles and users, checked first
// by the admin API's rules (bootstrap-checks.ts). Client secrets and
// passwords from the file are human-chosen, so they are stored as scrypt
// hashes (in the pool), re-hashed only when the file's value no longer
// matches the stored hash. So that a restart with many users is fast, each
// record keeps a digest (HMAC under a key derived from the master key, which
// is not in the data directory) of the file's secret with the stored hash:
// when it still matches, the secret is unchanged and scrypt is skipped.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { Bootstrap } from '../../bootstrap/bootstrap-file'
import type { AuthStore, ClientRecord, SecretHash, UserRecord } from '../models/auth-store'
import { storeBootstrapRecords } from '../models/bootstrap-records'
import { authModels } from '../models/index'
import { checkBootstrap } from './bootstrap-checks'
import { now } from '../../core/clock'
import { weakerThanCurrent, type PasswordHasher, type ScryptHash } from './password-hasher'
import { log } from '../../telemetry/log'

/** The digest of `secret` as the file's value behind the stored `hash`. */
function digestOf(key: Buffer, secret: string, hash: ScryptHash): string {
  return createHmac('sha256', key).update(JSON.stringify([secret, hash])).digest('base64url')
}

function sameDigest(a: string, b: string | undefined): boolean {
  return b !== undefined && a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))
}

type Hasher = Pick<PasswordHasher, 'hash' | 'verify'>

/** Whether the stored hash is current and was made from (or checked against) this very secret. */
function unchanged(key: Buffer, secret: string | undefined, stored: SecretHash | undefined, storedDigest: string | undefined): boolean {
  if (secret === undefined) return true
  return stored !== undefined && stored.alg === 'scrypt' && !weakerThanCurrent(stored) && sameDigest(digestOf(key, secret, stored), storedDigest)
}

/** The stored hash when it still matches `secret` (by digest, else by scrypt), else a fresh one; with its digest. */
async function keptOrRehashed(
  hasher: Hasher, key: Buffer, secret: string, stored: SecretHash | undefined, storedDigest: string | undefined,
): Promise<{ hash: ScryptHash; digest: string }> {
  if (stored !== undefined && stored.alg === 'scrypt' && !weakerThanCurrent(stored)) {
    const digest = digestOf(key, secret, stored)
    if (unchanged(key, secret, stored, storedDigest) || await hasher.verify(secret, stored)) return { hash: stored, digest }
  }
  const hash = await hasher.hash(secret)
  return { hash, digest: digestOf(key, secret, hash) }
}

const BATCH = 16

/** `work` over `items` in order, BATCH at a time. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < items.length; i += BATCH) out.push(...await Promise.all(items.slice(i, i + BATCH).map(work)))
  return out
}

/** `digestKey`: a key derived from the master key for the bootstrap digests. */
export async function applyAuthBootstrap(store: AuthStore, hasher: Hasher, boot: Bootstrap, digestKey: Buffer): Promise<void> {
  const models = authModels(store)
  checkBootstrap(boot, models)
  const changed = boot.clients.filter((c) => {
    const r = models.clients.find(c.client_id)
    return !unchanged(digestKey, c.client_secret, r?.secret, r?.bootstrapDigest)
  }).length + boot.users.filter((u) => {
    const r = models.users.find(u.id)
    return !unchanged(digestKey, u.password, r?.password, r?.bootstrapDigest)
  }).length
  // scrypt takes a while per secret: say why the start waits.
  if (changed > 0) log.info(`bootstrap: ${changed} secrets are new or changed; checking them with scrypt`)
  // The scrypt checks run side by side in the pool (one after another they
  // made most of a restart's time), a few at a time so a large file stays
  // within the pool's queue.
  const clients = await inBatches(boot.clients, async (c): Promise<ClientRecord> => {
    const existing = models.clients.find(c.client_id)
    const secret = c.client_secret === undefined ? undefined : await keptOrRehashed(hasher, digestKey, c.client_secret, existing?.secret, existing?.bootstrapDigest)
    const record: ClientRecord = {
      client_id: c.client_id, tenant: c.tenant, secret: secret?.hash,
      redirect_uris: c.redirect_uris, scopes: c.scopes, grant_types: c.grant_types,
    }
    if (c.cors_origins.length > 0) record.cors_origins = c.cors_origins
    if (secret !== undefined) record.bootstrapDigest = secret.digest
    return record
  })
  const users = await inBatches(boot.users, async (u): Promise<UserRecord> => {
    const existing = models.users.find(u.id)
    const password = await keptOrRehashed(hasher, digestKey, u.password, existing?.password, existing?.bootstrapDigest)
    return {
      id: u.id, username: u.username, email: u.email, email_verified: u.email_verified, tenants: u.tenants, password: password.hash, bootstrapDigest: password.digest,
    }
  })
  const validFrom = new Date(now()).toISOString()
  await storeBootstrapRecords(store, models, { ...boot, clients, users }, validFrom)
}
