// Applies the authorization part of the bootstrap file: idempotent upserts of
// tenants, packages, subscriptions and clients. A client secret from the file
// is human-chosen, so it is stored as scrypt; it is re-hashed only when the
// file's secret no longer matches the stored hash.
import type { Bootstrap } from '../bootstrap/bootstrap-file'
import type { AuthStore, ClientRecord } from './auth-store'
import type { PasswordHasher } from './password-hasher'

export async function applyAuthBootstrap(store: AuthStore, hasher: PasswordHasher, boot: Bootstrap): Promise<void> {
  const clients: ClientRecord[] = []
  for (const c of boot.clients) {
    const existing = store.clients.get(c.client_id)
    let secret = existing?.secret
    if (c.client_secret === undefined) secret = undefined
    else if (secret === undefined || secret.alg !== 'scrypt' || !(await hasher.verify(c.client_secret, secret))) {
      secret = await hasher.hash(c.client_secret)
    }
    clients.push({
      client_id: c.client_id, tenant: c.tenant, secret,
      redirect_uris: c.redirect_uris, scopes: c.scopes, grant_types: c.grant_types,
    })
  }
  await store.env.transaction(() => {
    for (const t of boot.tenants) store.tenants.putSync(t.id, t)
    for (const p of boot.packages) store.packages.putSync(p.id, p)
    for (const s of boot.subscriptions) store.subscriptions.putSync(s.id, s)
    for (const c of clients) store.clients.putSync(c.client_id, c)
  })
  await store.env.flushed
}
