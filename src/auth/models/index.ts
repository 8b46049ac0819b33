// The models of the admin-managed records, built over one auth store: the
// endpoints and helpers read and write them only through these.
import type { AuthStore } from './auth-store'
import { Clients } from './clients'
import { Packages } from './packages'
import { Roles } from './roles'
import { Subscriptions } from './subscriptions'
import { Tenants } from './tenants'
import { Users } from './users'

export interface AuthModels {
  tenants: Tenants
  packages: Packages
  subscriptions: Subscriptions
  clients: Clients
  users: Users
  roles: Roles
}

export function authModels(store: AuthStore): AuthModels {
  return {
    tenants: new Tenants(store), packages: new Packages(store), subscriptions: new Subscriptions(store),
    clients: new Clients(store), users: new Users(store), roles: new Roles(store),
  }
}
