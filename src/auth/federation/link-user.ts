// The local user of an upstream subject. A link (provider, upstream `sub`)
// names it; without one, the provider's provisioning rule decides: a new
// user with the configured tenants and roles, or the one existing user whose
// e-mail the upstream says it verified. An e-mail alone never signs anyone
// in: it only makes the first link, and only when verified upstream.
import { randomBytes } from 'node:crypto'
import type { JWTPayload } from 'jose'
import { SCRYPT_PARAMS } from '../../../workers/crypto/password-hash'
import { USERNAME } from '../helpers/user-rules'
import type { UserRecord } from '../models/auth-store'
import type { IdentityProviderRecord } from '../models/identity-providers'
import type { Users } from '../models/users'
import type { Federation } from './federation'

export class LinkRefused extends Error {}

/** A password hash no password matches: a federated user signs in upstream only. */
function noPassword(): UserRecord['password'] {
  return { alg: 'scrypt', salt: randomBytes(16).toString('base64'), hash: randomBytes(32).toString('base64'), ...SCRYPT_PARAMS }
}

function claim(claims: JWTPayload, name: string): string | undefined {
  const v = claims[name]
  return typeof v === 'string' && v !== '' ? v : undefined
}

function byVerifiedEmail(users: Users, provider: IdentityProviderRecord, claims: JWTPayload): UserRecord {
  const email = claim(claims, provider.claims.email)
  if (email === undefined || claims.email_verified !== true) {
    throw new LinkRefused(`identity provider "${provider.id}" links existing users only, and did not send an e-mail it verified`)
  }
  const found = users.all().filter((u) => u.email.toLowerCase() === email.toLowerCase())
  if (found.length !== 1) {
    throw new LinkRefused(found.length === 0
      ? `no user of this server has the e-mail verified by identity provider "${provider.id}"`
      : `several users of this server have the e-mail verified by identity provider "${provider.id}"`)
  }
  return found[0]!
}

function newUser(users: Users, provider: IdentityProviderRecord, claims: JWTPayload & { sub: string }, tenants: Record<string, string[]>): UserRecord {
  const username = claim(claims, provider.claims.username)
  if (username === undefined || !USERNAME.test(username)) {
    throw new LinkRefused(`identity provider "${provider.id}" sent no usable "${provider.claims.username}" claim for the username`)
  }
  if (users.ownerOf(username) !== undefined) {
    throw new LinkRefused(`the username "${username}" from identity provider "${provider.id}" belongs to another user of this server`)
  }
  const email = claim(claims, provider.claims.email)
  return {
    id: randomBytes(16).toString('base64url'), username, email: email ?? '', email_verified: email !== undefined && claims.email_verified === true,
    password: noPassword(), tenants,
  }
}

export async function linkedUser(fed: Federation, users: Users, provider: IdentityProviderRecord, claims: JWTPayload & { sub: string }): Promise<UserRecord> {
  const linked = fed.links.userOf(provider.id, claims.sub)
  const existing = linked === undefined ? undefined : users.find(linked)
  if (existing !== undefined) return existing
  const rule = provider.provisioning
  const user = 'tenants' in rule ? newUser(users, provider, claims, rule.tenants) : byVerifiedEmail(users, provider, claims)
  // A new user is checked again inside the transaction: a concurrent sign-in may have taken the username.
  const taken = !await fed.links.link(users, provider.id, claims.sub, user, !users.exists(user.id))
  if (taken) throw new LinkRefused(`the username "${user.username}" from identity provider "${provider.id}" belongs to another user of this server`)
  return user
}
