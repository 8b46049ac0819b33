// /oauth2/v1/admin/users[/{id}]: users (the `sub` is the id), their
// username, email, and roles per tenant. Passwords are hashed with scrypt in
// the pool and never shown. A password change does not end a lock-out.
// Deleting a user ends their tokens and sessions.
import { Type } from '@sinclair/typebox'
import type { AuthServices } from '../../services'
import type { UserRecord } from '../../models/auth-store'
import { UserBody } from './documented'
import { admin, IdParams, deleteOne, findOr404, getOne, listOf, reply, settle } from './common'
import { JsonFields, NAME, violation, type JsonFields as Fields } from '../../helpers/json-body'
import { EMAIL, PASSWORD, USERNAME } from '../../helpers/user-rules'
import { endTokensOfLeftTenants } from '../../helpers/tenant-change'

export function userView(u: UserRecord): Record<string, unknown> {
  return { id: u.id, username: u.username, email: u.email, tenants: u.tenants }
}

function checkTenants(s: AuthServices, tenants: Record<string, string[]>): void {
  for (const t of Object.keys(tenants)) if (!s.oauth.tenants.exists(t)) throw violation(`tenants: tenant "${t}" does not exist`)
}

/** Stores the user; the username must be free. */
async function save(s: AuthServices, user: UserRecord): Promise<void> {
  if (!await s.oauth.users.save(user)) throw violation(`username "${user.username}" is taken`)
}

function fields(f: Fields, base: UserRecord | undefined): Pick<UserRecord, 'username' | 'email' | 'tenants'> {
  return {
    username: f.has('username') || base === undefined ? f.string('username', USERNAME) : base.username,
    email: f.has('email') || base === undefined ? f.string('email', EMAIL) : base.email,
    tenants: f.has('tenants') ? f.nameLists('tenants') : base?.tenants ?? {},
  }
}

const users = (s: AuthServices): AuthServices['oauth']['users'] => s.oauth.users

export const listUsers = listOf(users, userView)
export const getUser = getOne('user', users, userView)

export const createUser = admin({
  body: 'json',
  documented: UserBody,
  handle(s, ex, { body }) {
    const f = JsonFields.parse(body)
    const base = fields(f, undefined)
    const id = f.optionalString('id', NAME) ?? base.username
    if (!NAME.test(id)) throw violation(`id "${id}" is not acceptable: give an id that is one word of visible ASCII`)
    const password = f.string('password', PASSWORD)
    checkTenants(s, base.tenants)
    if (s.oauth.users.exists(id)) throw violation(`user "${id}" exists: PUT /admin/users/${id} changes it`)
    settle(ex, async () => {
      const user: UserRecord = { id, ...base, password: await s.hasher.hash(password) }
      await save(s, user)
      reply(ex, 201, userView(user))
    })
  },
})

export const updateUser = admin({
  body: 'json',
  documented: Type.Partial(UserBody),
  params: IdParams,
  handle(s, ex, { params: { id }, body }) {
    const existing = findOr404(s.oauth.users, 'user', id)
    const f = JsonFields.parse(body)
    const changed = fields(f, existing)
    const password = f.has('password') ? f.string('password', PASSWORD) : undefined
    checkTenants(s, changed.tenants)
    settle(ex, async () => {
      const user: UserRecord = { ...existing, ...changed, password: password === undefined ? existing.password : await s.hasher.hash(password) }
      await save(s, user)
      await endTokensOfLeftTenants(s, user.id, existing.tenants, user.tenants)
      reply(ex, 200, userView(user))
    })
  },
})

/** DELETE also ends the user's tokens and sign-in sessions. */
export const deleteUser = deleteOne('user', users, {
  async cascade(s, user) {
    await s.oauth.refreshTokens.revokeWhere((r) => r.sub === user.id)
    await s.tokens.revokeWhere((r) => r.sub === user.id)
    await s.oauth.sessions.endForUser(user.id)
    await s.oauth.federation.links.removeUser(user.id)
  },
})
