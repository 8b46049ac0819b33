// Tenants (id -> organization), as the bootstrap file and the admin API declare them.
import type { TenantDecl } from '../../bootstrap/bootstrap-file'
import type { AuthStore } from './auth-store'
import { Keyed } from './keyed'

export class Tenants extends Keyed<TenantDecl> {
  constructor(store: AuthStore) {
    super(store, store.tenants)
  }
}
