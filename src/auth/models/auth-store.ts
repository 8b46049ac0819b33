// The authorization service's own LMDB environment (the one storage the front
// thread touches): tenants, packages, subscriptions, clients, users, roles,
// tokens, codes, sign-in sessions, lock-out counters and signing keys.
// Every secret is stored as a hash (tokens, codes, session ids: SHA-256 of
// 256 random bits; passwords and human-chosen client secrets: scrypt), and
// signing keys are sealed under the master key.
import { open, type Database, type RootDatabase } from 'lmdb'
import { join } from 'node:path'
import type { PackageDecl, TenantDecl } from '../../bootstrap/bootstrap-file'
import { KEY_OPTIONS } from '../../contract/key-encoding'
import { noteStorageDir } from '../../core/storage-failure'
import type { ScryptHash } from '../helpers/password-hasher'
import type { IdentityProviderRecord, UpstreamStateRecord } from './identity-providers'

export type SecretHash = ScryptHash | { alg: 'sha256'; hash: string }

export interface SubscriptionRecord {
  id: string
  tenant: string
  package: string
  /** ISO 8601 date-time with offset; set when the subscription was created. */
  validFrom?: string
}

export interface ClientRecord {
  client_id: string
  tenant: string
  /** undefined for a public client */
  secret: SecretHash | undefined
  redirect_uris: string[]
  scopes: string[]
  grant_types: string[]
  /** Origins besides those of the redirect URIs whose pages may call the token, userinfo, revoke, introspection and end-session endpoints (CORS). */
  cors_origins?: string[]
  /** Keyed digest of the bootstrap file's secret with this hash: an unchanged file skips scrypt at start. */
  bootstrapDigest?: string
}

export interface UserRecord {
  /** the `sub` */
  id: string
  username: string
  email: string
  /** whether the e-mail was verified (the ID token's email_verified); absent: false */
  email_verified?: boolean
  password: ScryptHash
  /** tenant -> role names */
  tenants: Record<string, string[]>
  /** Keyed digest of the bootstrap file's password with this hash: an unchanged file skips scrypt at start. */
  bootstrapDigest?: string
}

/** What a token was issued for; shared by access tokens, refresh tokens and codes. */
export interface GrantFields {
  /** undefined for a password grant without client_id */
  client: string | undefined
  /** false when the client did not authenticate (public client, password grant without secret) */
  clientAuthenticated?: boolean
  /** undefined for a platform.no_tenant or platform.org token */
  tenant: string | undefined
  org?: string
  /** every effective scope, including the tenant or org scope */
  scopes: string[]
  /** the user (`sub`), undefined for client credentials */
  sub: string | undefined
  /** platform-session-id */
  sessionId?: string
}

export interface AccessTokenRecord extends GrantFields {
  /** expiry, epoch ms */
  exp: number
  /** issue time, epoch ms */
  iat?: number
  /** SHA-256 of the refresh token this token came from (or was issued with) */
  refresh?: string
}

export interface RefreshTokenRecord extends GrantFields {
  /** a public identifier for listings (the token itself is never shown again) */
  id: string
  created: number
  /** access tokens issued with or from it: [hash, exp], pruned when expired */
  accessTokens: [string, number][]
}

export interface CodeRecord extends GrantFields {
  exp: number
  redirectUri: string
  /** true when the authorization request named the redirect URI (then /token must repeat it) */
  redirectUriGiven: boolean
  codeChallenge: string | undefined
  codeChallengeMethod: 'S256' | 'plain' | undefined
  nonce: string | undefined
  authTime: number
  /** set once exchanged: the tokens it gave, revoked if the code is replayed (no refresh token for the account page's client) */
  used?: { access: string; refresh?: string }
}

export interface SessionRecord {
  sub: string
  authTime: number
  exp: number
  /** clients this browser session signed in to */
  clients: string[]
}

export interface LockoutRecord {
  failures: number
  /** the last failed attempt, epoch ms */
  lastFailure: number
  /** set by the 15th failure: blocked until then, epoch ms */
  blockedUntil?: number
}

export interface SigningKeyRecord {
  kid: string
  alg: 'RS256'
  created: number
  /** set when a newer key took over; the key is still published for a while */
  retired?: number
  publicJwk: Record<string, string>
  /** the PKCS#8 private key, AES-256-GCM under a key derived from the master key */
  sealed: string
}

export interface AuthStore {
  env: RootDatabase
  tenants: Database<TenantDecl, string>
  packages: Database<PackageDecl, string>
  subscriptions: Database<SubscriptionRecord, string>
  clients: Database<ClientRecord, string>
  users: Database<UserRecord, string>
  /** username -> user id */
  usernames: Database<string, string>
  /** role name -> scopes */
  roles: Database<string[], string>
  /** SHA-256 of the token -> record */
  accessTokens: Database<AccessTokenRecord, string>
  /** [expiry ms, SHA-256 of the token] -> 1: the sweep reads only what has expired */
  accessTokenExpiry: Database<1, [number, string]>
  /** SHA-256 of the token -> record */
  refreshTokens: Database<RefreshTokenRecord, string>
  /** [sub, hash] -> hash: a user's refresh tokens */
  refreshTokensByUser: Database<string, [string, string]>
  /** SHA-256 of the code -> record */
  codes: Database<CodeRecord, string>
  /** SHA-256 of the session cookie -> record */
  sessions: Database<SessionRecord, string>
  /** `user:<id>` or `name:<username>` (unknown users) -> failed attempts */
  lockouts: Database<LockoutRecord, string>
  /** kid -> key */
  signingKeys: Database<SigningKeyRecord, string>
  /** provider id -> custom identity provider (models/identity-providers.ts) */
  identityProviders: Database<IdentityProviderRecord, string>
  /** [provider id, upstream sub] -> local user id */
  identityLinks: Database<string, [string, string]>
  /** SHA-256 of our upstream `state` -> the pending upstream sign-in */
  upstreamStates: Database<UpstreamStateRecord, string>
}

/** Keys of any length and content keep their order and ranges (store/key-encoding.ts). */
const DB_OPTIONS = KEY_OPTIONS

export function openAuthStore(dataDir: string): AuthStore {
  noteStorageDir(join(dataDir, 'auth'))
  const env = open({ path: join(dataDir, 'auth'), maxDbs: 32, overlappingSync: true })
  return {
    env,
    tenants: env.openDB('tenants', DB_OPTIONS),
    packages: env.openDB('packages', DB_OPTIONS),
    subscriptions: env.openDB('subscriptions', DB_OPTIONS),
    // Read on every client authentication: lmdb-js's object cache skips the
    // read and decode, and its puts and removes update it at once (the one
    // writer of this table is this thread; records are never mutated).
    clients: env.openDB('clients', { ...DB_OPTIONS, cache: true }),
    users: env.openDB('users', DB_OPTIONS),
    usernames: env.openDB('usernames', DB_OPTIONS),
    roles: env.openDB('roles', DB_OPTIONS),
    accessTokens: env.openDB('accessTokens', DB_OPTIONS),
    accessTokenExpiry: env.openDB('accessTokenExpiry', DB_OPTIONS),
    refreshTokens: env.openDB('refreshTokens', DB_OPTIONS),
    refreshTokensByUser: env.openDB('refreshTokensByUser', DB_OPTIONS),
    codes: env.openDB('codes', DB_OPTIONS),
    sessions: env.openDB('sessions', DB_OPTIONS),
    lockouts: env.openDB('lockouts', DB_OPTIONS),
    signingKeys: env.openDB('signingKeys', DB_OPTIONS),
    identityProviders: env.openDB('identityProviders', DB_OPTIONS),
    identityLinks: env.openDB('identityLinks', DB_OPTIONS),
    upstreamStates: env.openDB('upstreamStates', DB_OPTIONS),
  }
}

/**
 * Waits until every write issued so far is durable. `committed` first: when
 * a commit fails (a full disk) it rejects with the failure, where `flushed`
 * alone would wait forever. (Taking the flush before the commit, as the
 * group commit does, did not help the token path: bench/MEASUREMENTS.md,
 * "Writes, tokens and the front thread", 2026-11-23.)
 */
export async function durable(store: Pick<AuthStore, 'env'>): Promise<void> {
  const settle = replicatedWrites.get(store.env)
  if (settle !== undefined) return settle()
  await store.env.committed
  await store.env.flushed
}

/**
 * Cluster mode: the auth store's writes are appended to its replicated
 * stream before LMDB commits them (src/cluster/auth-replica.ts), so "durable"
 * is that path's word: every write issued so far appended and committed.
 */
const replicatedWrites = new WeakMap<RootDatabase, () => Promise<void>>()

export function replicateWrites(store: Pick<AuthStore, 'env'>, settle: () => Promise<void>): void {
  replicatedWrites.set(store.env, settle)
}
