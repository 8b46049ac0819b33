// Packages: the services (and their scopes) a provider tenant offers.
import type { PackageDecl } from '../../bootstrap/bootstrap-file'
import type { AuthStore } from './auth-store'
import { Keyed } from './keyed'

export class Packages extends Keyed<PackageDecl> {
  constructor(store: AuthStore) {
    super(store, store.packages)
  }

  ids(): string[] {
    return [...this.table.getKeys()]
  }

  providedBy(tenant: string): PackageDecl[] {
    return this.all().filter((p) => p.provider.id === tenant)
  }
}
