// Subscriptions: a tenant's use of another tenant's package.
import type { AuthStore, SubscriptionRecord } from './auth-store'
import { Keyed } from './keyed'

export class Subscriptions extends Keyed<SubscriptionRecord> {
  constructor(store: AuthStore) {
    super(store, store.subscriptions)
  }

  ofTenant(tenant: string): SubscriptionRecord[] {
    return this.all().filter((s) => s.tenant === tenant)
  }

  ofPackage(pkg: string): SubscriptionRecord[] {
    return this.all().filter((s) => s.package === pkg)
  }
}
