// /oauth2/v1/admin/users[/{id}]: users (the `sub` is the id), their
// username, email (and whether it was verified), and roles per tenant. Passwords are hashed with scrypt in
// the pool and never shown. A password change does not end a lock-out.
// Deleting a user ends their tokens and sessions.
import type { Static } from '@sinclair/typebox'
import type { AuthServices } from '../../services'
import type { UserRecord } from '../../models/auth-store'
import { UserBody, UserUpdateBody } from './bodies'
import { admin, IdParams, deleteOne, findOr404, getOne, listOf, reply, settle } from './common'
import { bodyReader, listsOf, NAME, violation } from '../../helpers/json-body'
import { ADMIN } from '../answers'
import { endTokensOfLeftTenants } from '../../helpers/tenant-change'

const readUser = bodyReader(UserBody)
const readUpdate = bodyReader(UserUpdateBody)

export function userView(u: UserRecord): Record<string, unknown> {
  return { id: u.id, username: u.username, email: u.email, email_verified: u.email_verified === true, tenants: u.tenants }
}

function checkTenants(s: AuthServices, tenants: Record<string, string[]>): void {
  for (const t of Object.keys(tenants)) if (!s.oauth.tenants.exists(t)) throw violation(`tenants: tenant "${t}" does not exist`)
}

/** Stores the user; the username must be free. */
async function save(s: AuthServices, user: UserRecord): Promise<void> {
  if (!await s.oauth.users.save(user)) throw violation(`username "${user.username}" is taken`)
}

type Fields = Pick<UserRecord, 'username' | 'email' | 'email_verified' | 'tenants'>

/** The given fields over `base` (roles given as null are none; a new e-mail is unverified unless said otherwise). */
function fields(given: Static<typeof UserUpdateBody>, base: Fields): Fields {
  const email = given.email ?? base.email
  const verified = given.email_verified ?? (email === base.email ? base.email_verified === true : false)
  return { username: given.username ?? base.username, email, email_verified: verified, tenants: given.tenants === undefined ? base.tenants : listsOf(given.tenants) }
}

const users = (s: AuthServices): AuthServices['oauth']['users'] => s.oauth.users

export const listUsers = listOf(users, ADMIN.users, userView)
export const getUser = getOne('user', users, ADMIN.user, userView)

export const createUser = admin({
  body: 'json',
  documented: UserBody,
  answers: { 201: ADMIN.user },
  errors: ['validation_violation'],
  handle(s, ex, { body }) {
    const given = readUser(body)
    const base = fields(given, { username: given.username, email: given.email, email_verified: false, tenants: {} })
    // The username is the id when none is given: then it must be a name too.
    const id = given.id ?? base.username
    if (!NAME.test(id)) throw violation(`id "${id}" is not acceptable: give an id that is one word of visible ASCII`)
    const password = given.password
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
  documented: UserUpdateBody,
  answers: { 200: ADMIN.user },
  errors: ['validation_violation', 'element_not_found'],
  params: IdParams,
  handle(s, ex, { params: { id }, body }) {
    const existing = findOr404(s.oauth.users, 'user', id)
    const given = readUpdate(body)
    const changed = fields(given, existing)
    const password = given.password
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
