// Custom identity providers (OpenID Connect federation): the
// upstream each one names, the links from an upstream subject to one local
// user (keyed by provider and upstream `sub`, never by e-mail), and the
// pending upstream sign-ins (our `state`, single use, short-lived).
import { durable, type AuthStore, type UserRecord } from './auth-store'
import { now } from '../../core/clock'
import { sha256 } from '../helpers/secrets'
import { Keyed } from './keyed'
import type { Users } from './users'

/** What a first-time upstream user becomes: a new user with these roles, or an existing user with the same verified e-mail. */
export type Provisioning = { tenants: Record<string, string[]> } | { link_by_verified_email: true }

export interface IdentityProviderRecord {
  id: string
  /** the upstream issuer; its discovery document is `${issuer}/.well-known/openid-configuration` */
  issuer: string
  client_id: string
  /** the client secret, AES-256-GCM under a key derived from the master key (federation/sealed-secret.ts); undefined: a public client (PKCE only) */
  sealedSecret: string | undefined
  scopes: string[]
  /** which upstream ID token claims give the username and the e-mail */
  claims: { username: string; email: string }
  provisioning: Provisioning
}

export interface UpstreamStateRecord {
  provider: string
  /** SHA-256 of the browser binding cookie: the callback must come from the browser that started the sign-in */
  browser: string
  nonce: string
  codeVerifier: string
  /** the original authorization request's parameters, finished after the callback */
  params: string
  exp: number
}

/** How long the user may take at the upstream provider. */
export const UPSTREAM_STATE_TTL_MS = 10 * 60_000

export class IdentityProviders extends Keyed<IdentityProviderRecord> {
  constructor(store: AuthStore) {
    super(store, store.identityProviders)
  }

  /** Upserts the bootstrap file's providers in one transaction. */
  async storeAll(records: readonly IdentityProviderRecord[]): Promise<void> {
    await this.store.env.transaction(() => {
      for (const r of records) this.putSync(r.id, r)
    })
    await durable(this.store)
  }
}

export class IdentityLinks {
  constructor(private readonly store: AuthStore) {}

  userOf(provider: string, upstreamSub: string): string | undefined {
    return this.store.identityLinks.get([provider, upstreamSub])
  }

  /**
   * Links the upstream subject to `user`, storing the user first when it is
   * new, in one transaction; false (nothing stored) when a new user's
   * username was taken meanwhile.
   */
  async link(users: Users, provider: string, upstreamSub: string, user: UserRecord, isNew: boolean): Promise<boolean> {
    const linked = await this.store.env.transaction(() => {
      if (isNew) {
        if (users.ownerOf(user.username) !== undefined) return false
        users.putSync(user)
      }
      this.store.identityLinks.putSync([provider, upstreamSub], user.id)
      return true
    })
    await durable(this.store)
    return linked
  }

  /** Every link of a provider (a deleted provider ends them). */
  async removeProvider(provider: string): Promise<void> {
    for (const key of this.store.identityLinks.getKeys({ start: [provider], end: [provider, '\uffff'] })) {
      void this.store.identityLinks.remove(key)
    }
    await durable(this.store)
  }

  /**
   * The providers linked to one user and the user's id at each. Links are
   * keyed by provider and upstream subject, so this reads them all: a rare
   * call (a data subject's export), as removeUser.
   */
  ofUser(userId: string): { provider: string; subject: string }[] {
    const links: { provider: string; subject: string }[] = []
    for (const { key, value } of this.store.identityLinks.getRange()) if (value === userId) links.push({ provider: key[0], subject: key[1] })
    return links
  }

  /** The links of one user (a deleted user ends them). */
  async removeUser(userId: string): Promise<void> {
    for (const { key, value } of this.store.identityLinks.getRange()) if (value === userId) void this.store.identityLinks.remove(key)
    await durable(this.store)
  }
}

export class UpstreamStates {
  constructor(private readonly store: AuthStore) {}

  async save(state: string, record: Omit<UpstreamStateRecord, 'exp'>): Promise<void> {
    await this.store.upstreamStates.put(sha256(state), { ...record, exp: now() + UPSTREAM_STATE_TTL_MS })
    await durable(this.store)
  }

  /** The pending sign-in of `state`, removed in the same transaction: a replayed state finds nothing. */
  async take(state: string): Promise<UpstreamStateRecord | undefined> {
    const hash = sha256(state)
    const record = await this.store.env.transaction(() => {
      const found = this.store.upstreamStates.get(hash)
      if (found !== undefined) this.store.upstreamStates.removeSync(hash)
      return found
    })
    return record === undefined || record.exp <= now() ? undefined : record
  }

  async sweep(): Promise<void> {
    const t = now()
    for (const { key, value } of this.store.upstreamStates.getRange()) if (value.exp <= t) void this.store.upstreamStates.remove(key)
    await durable(this.store)
  }
}
