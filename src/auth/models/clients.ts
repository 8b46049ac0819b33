// OAuth clients of a tenant: redirect URIs, scopes, grant types, secret hash.
// Besides the stored ones, the built-in account page's client (account-client.ts)
// is found by its id; listings show only the stored ones.
import type { AuthStore, ClientRecord } from './auth-store'
import { Keyed } from './keyed'

export class Clients extends Keyed<ClientRecord> {
  constructor(store: AuthStore, private readonly builtIn?: ClientRecord) {
    super(store, store.clients)
  }

  override find(id: string): ClientRecord | undefined {
    return id === this.builtIn?.client_id ? this.builtIn : super.find(id)
  }

  override exists(id: string): boolean {
    return this.find(id) !== undefined
  }

  ofTenant(tenant: string): ClientRecord[] {
    return this.all().filter((c) => c.tenant === tenant)
  }
}
