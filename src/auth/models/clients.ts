// OAuth clients of a tenant: redirect URIs, scopes, grant types, secret hash.
import type { AuthStore, ClientRecord } from './auth-store'
import { Keyed } from './keyed'

export class Clients extends Keyed<ClientRecord> {
  constructor(store: AuthStore) {
    super(store, store.clients)
  }

  ofTenant(tenant: string): ClientRecord[] {
    return this.all().filter((c) => c.tenant === tenant)
  }
}
