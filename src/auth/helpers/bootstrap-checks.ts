// The bootstrap file follows the admin API's rules: every entry is checked
// against a schema made of the admin API's fields (json-body.ts), with the same patterns (names, e-mail,
// username, a password of 8 to 1024 characters, which a client secret from
// the file must meet too), and every reference must resolve as the admin API
// wants it: the tenant of a client, user or subscription, the package of a
// subscription, the provider tenant (and its organization) of a package;
// whatever the file declares or the store already holds. A violation stops
// the start with one line naming the entry.
import type { Bootstrap, TenantDecl } from '../../bootstrap/bootstrap-file'
import { ConfigError } from '../../config/load-config'
import { ApiError } from '../../core/errors'
import type { AuthModels } from '../models/index'
import { builtInClientRefusal } from '../models/account-client'
import { clientProblem } from './client-rules'
import { Type, type TSchema } from '@sinclair/typebox'
import { field, fieldsReader, flag, list, NAME, nameLists, objects, TENANT_ID, TENANT_ID_RULE, text, URI } from './json-body'
import { EMAIL, PASSWORD, USERNAME } from './user-rules'

/** The admin API's password rule, said without echoing the secret into a log. */
function checkSecret(value: string | undefined, path: string): void {
  if (value !== undefined && !PASSWORD.test(value)) fail(`${path} is not acceptable: 8 to 1024 characters, no control characters (as the admin API wants a password)`)
}

function fail(message: string): never {
  throw new ConfigError(`bootstrap file: ${message}`)
}

const Tenant = Type.Object({ id: field({}, TENANT_ID, TENANT_ID_RULE), org: field() })
const Package = Type.Object({
  id: field(), version: field(), provider: Type.Object({ id: field(), org: field() }),
  includedServices: objects(Type.Object({ id: field(), name: text(), scopes: list() })),
})
const Subscription = Type.Object({ id: field(), tenant: field(), package: field() })
const Client = Type.Object({
  client_id: field(), tenant: field(), redirect_uris: list({}, URI), scopes: list(), grant_types: list(), cors_origins: list({}, URI),
})
const Role = Type.Object({ scopes: list() })
const User = Type.Object({ id: field(), username: field({}, USERNAME), email: field({}, EMAIL), email_verified: flag(), tenants: nameLists() })

/** Checks an entry with the admin API's fields; their 400 becomes the start's one-line error. */
function checker(schema: TSchema): (doc: unknown, path: string) => void {
  const read = fieldsReader(schema)
  return (doc, path) => {
    try {
      read(doc, path)
    } catch (err) {
      if (err instanceof ApiError) fail(err.message)
      throw err
    }
  }
}
const checkTenant = checker(Tenant)
const checkPackage = checker(Package)
const checkSubscription = checker(Subscription)
const checkClient = checker(Client)
const checkRole = checker(Role)
const checkUser = checker(User)

/** The records the file's references may resolve to. */
export type BootstrapModels = Pick<AuthModels, 'tenants' | 'packages' | 'subscriptions' | 'users'>

export function checkBootstrap(boot: Bootstrap, models: BootstrapModels): void {
  const tenants = new Map<string, TenantDecl>()
  for (const value of models.tenants.all()) tenants.set(value.id, value)
  boot.tenants.forEach((t, i) => {
    checkTenant(t, `tenants[${i}]`)
    tenants.set(t.id, t)
  })
  const tenant = (id: string, path: string): TenantDecl => tenants.get(id) ?? fail(`${path}: tenant "${id}" does not exist`)

  const packages = new Set<string>(models.packages.ids())
  boot.packages.forEach((p, i) => {
    const path = `packages[${i}]`
    checkPackage(p, path)
    const provider = tenant(p.provider.id, `${path}.provider.id`)
    if (provider.org !== p.provider.org) fail(`${path}.provider.org: tenant "${provider.id}" belongs to organization "${provider.org}"`)
    packages.add(p.id)
  })

  const subscribed = new Map<string, string>()
  for (const value of models.subscriptions.all()) subscribed.set(`${value.tenant}\0${value.package}`, value.id)
  boot.subscriptions.forEach((s, i) => {
    const path = `subscriptions[${i}]`
    checkSubscription(s, path)
    tenant(s.tenant, `${path}.tenant`)
    if (!packages.has(s.package)) fail(`${path}.package: package "${s.package}" does not exist`)
    const other = subscribed.get(`${s.tenant}\0${s.package}`)
    if (other !== undefined && other !== s.id) fail(`${path}: tenant "${s.tenant}" already subscribes to "${s.package}" (subscription "${other}")`)
    subscribed.set(`${s.tenant}\0${s.package}`, s.id)
  })

  boot.clients.forEach((c, i) => {
    const path = `clients[${i}]`
    checkClient(c, path)
    const builtIn = builtInClientRefusal(c.client_id)
    if (builtIn !== undefined) fail(`${path}: ${builtIn}`)
    checkSecret(c.client_secret, `${path}.client_secret`)
    const problem = clientProblem({ ...c, public: c.client_secret === undefined })
    if (problem !== undefined) fail(`${path} ${problem}`)
    tenant(c.tenant, `${path}.tenant`)
  })

  for (const [name, scopes] of Object.entries(boot.roles)) {
    if (!NAME.test(name)) fail(`roles: "${name}" is not acceptable: one word of visible ASCII, at most 128 characters`)
    checkRole({ scopes }, `roles.${name}`)
  }

  const fileUsernames = new Map<string, string>()
  for (const u of boot.users) fileUsernames.set(u.id, u.username)
  const seen = new Map<string, string>()
  boot.users.forEach((u, i) => {
    const path = `users[${i}]`
    checkUser(u, path)
    checkSecret(u.password, `${path}.password`)
    for (const t of Object.keys(u.tenants)) tenant(t, `${path}.tenants`)
    const other = seen.get(u.username)
    if (other !== undefined && other !== u.id) fail(`${path}.username "${u.username}" is also the username of user "${other}"`)
    seen.set(u.username, u.id)
    // Taken in the store by a user the file does not rename: the admin API would refuse it too.
    const owner = models.users.ownerOf(u.username)
    if (owner !== undefined && owner !== u.id && (fileUsernames.get(owner) ?? u.username) === u.username) {
      fail(`${path}.username "${u.username}" is taken by user "${owner}"`)
    }
  })
}
