// The authorization service's own LMDB environment (the one storage the front
// thread touches): tenants, packages, subscriptions, clients and tokens.
import { open, type Database, type RootDatabase } from 'lmdb'
import { join } from 'node:path'
import type { PackageDecl, SubscriptionDecl, TenantDecl } from '../bootstrap/bootstrap-file'
import type { ScryptHash } from './password-hasher'

export type SecretHash = ScryptHash | { alg: 'sha256'; hash: string }

export interface ClientRecord {
  client_id: string
  tenant: string
  /** undefined for a public client */
  secret: SecretHash | undefined
  redirect_uris: string[]
  scopes: string[]
  grant_types: string[]
}

export interface AccessTokenRecord {
  client: string
  /** undefined for a platform.no_tenant token */
  tenant: string | undefined
  scopes: string[]
  /** expiry, epoch ms */
  exp: number
  sub: string | undefined
}

export interface AuthStore {
  env: RootDatabase
  tenants: Database<TenantDecl, string>
  packages: Database<PackageDecl, string>
  subscriptions: Database<SubscriptionDecl, string>
  clients: Database<ClientRecord, string>
  /** SHA-256 of the token -> record */
  accessTokens: Database<AccessTokenRecord, string>
}

export function openAuthStore(dataDir: string): AuthStore {
  const env = open({ path: join(dataDir, 'auth'), maxDbs: 16, overlappingSync: true })
  return {
    env,
    tenants: env.openDB('tenants', {}),
    packages: env.openDB('packages', {}),
    subscriptions: env.openDB('subscriptions', {}),
    clients: env.openDB('clients', {}),
    accessTokens: env.openDB('accessTokens', {}),
  }
}
