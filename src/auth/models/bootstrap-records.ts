// The bootstrap file's records, stored in one transaction: an upsert of
// each (a subscription keeps its first validFrom; a user goes through the
// users model, the one writer of the username index).
import type { PackageDecl, SubscriptionDecl, TenantDecl } from '../../bootstrap/bootstrap-file'
import { durable, type AuthStore, type ClientRecord, type UserRecord } from './auth-store'
import type { AuthModels } from './index'

export interface BootstrapRecords {
  tenants: TenantDecl[]
  packages: PackageDecl[]
  subscriptions: SubscriptionDecl[]
  clients: ClientRecord[]
  /** role name -> scopes */
  roles: Record<string, string[]>
  users: UserRecord[]
}

/** `validFrom`: the start's time, for subscriptions new to the store. */
export async function storeBootstrapRecords(store: AuthStore, models: AuthModels, r: BootstrapRecords, validFrom: string): Promise<void> {
  await store.env.transaction(() => {
    for (const t of r.tenants) models.tenants.putSync(t.id, t)
    for (const p of r.packages) models.packages.putSync(p.id, p)
    for (const s of r.subscriptions) models.subscriptions.putSync(s.id, { ...s, validFrom: models.subscriptions.find(s.id)?.validFrom ?? validFrom })
    for (const c of r.clients) models.clients.putSync(c.client_id, c)
    for (const [name, scopes] of Object.entries(r.roles)) models.roles.putSync(name, scopes)
    for (const u of r.users) models.users.putSync(u)
  })
  await durable(store)
}
