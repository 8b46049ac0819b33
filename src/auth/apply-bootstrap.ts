// Applies the authorization part of the bootstrap file: idempotent upserts of
// tenants, packages, subscriptions, clients, roles and users. Client secrets
// and passwords from the file are human-chosen, so they are stored as scrypt
// hashes (in the pool), re-hashed only when the file's value no longer
// matches the stored hash. Clients follow the rules of the admin API.
import { durable } from './auth-store'
import type { Bootstrap, ClientDecl, UserDecl } from '../bootstrap/bootstrap-file'
import { ConfigError } from '../config'
import type { AuthStore, ClientRecord, SecretHash, SubscriptionRecord, UserRecord } from './auth-store'
import { clientProblem } from './client-rules'
import { now } from '../clock'
import { weakerThanCurrent, type PasswordHasher, type ScryptHash } from './password-hasher'

/** The stored hash when it still matches `secret`, else a fresh one. */
async function keptOrRehashed(hasher: PasswordHasher, secret: string, stored: SecretHash | undefined): Promise<ScryptHash> {
  if (stored !== undefined && stored.alg === 'scrypt' && !weakerThanCurrent(stored) && (await hasher.verify(secret, stored))) return stored
  return hasher.hash(secret)
}

const BATCH = 16

/** `work` over `items` in order, BATCH at a time. */
async function inBatches<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = []
  for (let i = 0; i < items.length; i += BATCH) out.push(...await Promise.all(items.slice(i, i + BATCH).map(work)))
  return out
}

function checkClients(clients: ClientDecl[]): void {
  clients.forEach((c, i) => {
    const problem = clientProblem({ ...c, public: c.client_secret === undefined })
    if (problem !== undefined) throw new ConfigError(`bootstrap file: clients[${i}] ${problem}`)
  })
}

function checkUsers(users: UserDecl[]): void {
  const seen = new Map<string, string>()
  users.forEach((u, i) => {
    const other = seen.get(u.username)
    if (other !== undefined && other !== u.id) throw new ConfigError(`bootstrap file: users[${i}].username "${u.username}" is also the username of user "${other}"`)
    seen.set(u.username, u.id)
  })
}

export async function applyAuthBootstrap(store: AuthStore, hasher: PasswordHasher, boot: Bootstrap): Promise<void> {
  checkClients(boot.clients)
  checkUsers(boot.users)
  // The scrypt checks run side by side in the pool (one after another they
  // made most of a restart's time), a few at a time so a large file stays
  // within the pool's queue.
  const clients = await inBatches(boot.clients, async (c): Promise<ClientRecord> => {
    const existing = store.clients.get(c.client_id)
    const secret = c.client_secret === undefined ? undefined : await keptOrRehashed(hasher, c.client_secret, existing?.secret)
    return {
      client_id: c.client_id, tenant: c.tenant, secret,
      redirect_uris: c.redirect_uris, scopes: c.scopes, grant_types: c.grant_types,
    }
  })
  const users = await inBatches(boot.users, async (u): Promise<UserRecord> => {
    const existing = store.users.get(u.id)
    return { id: u.id, username: u.username, email: u.email, tenants: u.tenants, password: await keptOrRehashed(hasher, u.password, existing?.password) }
  })
  const validFrom = new Date(now()).toISOString()
  await store.env.transaction(() => {
    for (const t of boot.tenants) store.tenants.putSync(t.id, t)
    for (const p of boot.packages) store.packages.putSync(p.id, p)
    for (const s of boot.subscriptions) {
      const record: SubscriptionRecord = { ...s, validFrom: store.subscriptions.get(s.id)?.validFrom ?? validFrom }
      store.subscriptions.putSync(s.id, record)
    }
    for (const c of clients) store.clients.putSync(c.client_id, c)
    for (const [name, scopes] of Object.entries(boot.roles)) store.roles.putSync(name, scopes)
    for (const u of users) {
      const previous = store.users.get(u.id)
      if (previous !== undefined && previous.username !== u.username && store.usernames.get(previous.username) === u.id) {
        store.usernames.removeSync(previous.username)
      }
      store.usernames.putSync(u.username, u.id)
      store.users.putSync(u.id, u)
    }
  })
  await durable(store)
}
