// Roles: a name for a list of scopes, given to users per tenant.
import type { AuthStore } from './auth-store'
import { Keyed } from './keyed'

export class Roles extends Keyed<string[]> {
  constructor(store: AuthStore) {
    super(store, store.roles)
  }

  /** name -> scopes, every role */
  entries(): [string, string[]][] {
    return [...this.table.getRange()].map(({ key, value }) => [key, value])
  }
}
