// /oauth2/v1/admin/users[/{id}]: users (the `sub` is the id), their
// username, email, and roles per tenant. Passwords are hashed with scrypt in
// the pool and never shown. A password change does not end a lock-out.
// Deleting a user ends their tokens and sessions.
import { durable } from '../../models/auth-store'
import type { Services } from '../../../front/services'
import type { UserRecord } from '../../models/auth-store'
import { admin, deleteOne, getOne, listOf, missing, reply, settle } from './common'
import { JsonFields, NAME, violation, type JsonFields as Fields } from './json-body'

export const EMAIL = /^[^\s@"<>]{1,128}@[^\s@"<>]{1,128}$/
export const USERNAME = /^[^\x00-\x20\x7f]{1,128}$/
export const PASSWORD = /^[^\x00-\x1f\x7f]{8,1024}$/

export function userView(u: UserRecord): Record<string, unknown> {
  return { id: u.id, username: u.username, email: u.email, tenants: u.tenants }
}

function checkTenants(s: Services, tenants: Record<string, string[]>): void {
  for (const t of Object.keys(tenants)) if (s.authStore.tenants.get(t) === undefined) throw violation(`tenants: tenant "${t}" does not exist`)
}

/** Stores the user and its username index in one transaction; the username must be free. */
async function save(s: Services, user: UserRecord, previousUsername: string | undefined): Promise<void> {
  const taken = await s.authStore.env.transaction(() => {
    const owner = s.authStore.usernames.get(user.username)
    if (owner !== undefined && owner !== user.id) return true
    if (previousUsername !== undefined && previousUsername !== user.username) s.authStore.usernames.removeSync(previousUsername)
    s.authStore.usernames.putSync(user.username, user.id)
    s.authStore.users.putSync(user.id, user)
    return false
  })
  if (taken) throw violation(`username "${user.username}" is taken`)
  await durable(s.authStore)
}

function fields(f: Fields, base: UserRecord | undefined): Pick<UserRecord, 'username' | 'email' | 'tenants'> {
  return {
    username: f.has('username') || base === undefined ? f.string('username', USERNAME) : base.username,
    email: f.has('email') || base === undefined ? f.string('email', EMAIL) : base.email,
    tenants: f.has('tenants') ? f.nameLists('tenants') : base?.tenants ?? {},
  }
}

const users = (s: Services): Services['authStore']['users'] => s.authStore.users

export const listUsers = listOf(users, userView)
export const getUser = getOne('user', users, userView)

export const createUser = admin({
  body: 'json',
  handle(s, ex, _params, body) {
    const f = JsonFields.parse(body)
    const base = fields(f, undefined)
    const id = f.optionalString('id', NAME) ?? base.username
    if (!NAME.test(id)) throw violation(`id "${id}" is not acceptable: give an id that is one word of visible ASCII`)
    const password = f.string('password', PASSWORD)
    checkTenants(s, base.tenants)
    if (s.authStore.users.get(id) !== undefined) throw violation(`user "${id}" exists: PUT /admin/users/${id} changes it`)
    settle(ex, async () => {
      const user: UserRecord = { id, ...base, password: await s.hasher.hash(password) }
      await save(s, user, undefined)
      reply(ex, 201, userView(user))
    })
  },
})

export const updateUser = admin({
  body: 'json',
  handle(s, ex, [id], body) {
    const existing = s.authStore.users.get(id!)
    if (existing === undefined) throw missing('user', id!)
    const f = JsonFields.parse(body)
    const changed = fields(f, existing)
    const password = f.has('password') ? f.string('password', PASSWORD) : undefined
    checkTenants(s, changed.tenants)
    settle(ex, async () => {
      const user: UserRecord = { ...existing, ...changed, password: password === undefined ? existing.password : await s.hasher.hash(password) }
      await save(s, user, existing.username)
      reply(ex, 200, userView(user))
    })
  },
})

/** DELETE also ends the user's tokens and sign-in sessions. */
export const deleteUser = deleteOne('user', users, {
  async cascade(s, user) {
    await s.authStore.env.transaction(() => {
      if (s.authStore.usernames.get(user.username) === user.id) s.authStore.usernames.removeSync(user.username)
    })
    await s.oauth.refreshTokens.revokeWhere((r) => r.sub === user.id)
    await s.tokens.revokeWhere((r) => r.sub === user.id)
    await s.oauth.sessions.endForUser(user.id)
  },
})
