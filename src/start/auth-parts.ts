// The authorization service's store and helpers, opened at start.
import { AccessTokens } from '../auth/models/access-tokens'
import { applyAuthBootstrap } from '../auth/helpers/apply-bootstrap'
import { applyIdentityProviderBootstrap } from '../auth/federation/bootstrap'
import { identityProviderSecretKey } from '../auth/federation/sealed-secret'
import { openAuthStore, type AuthStore } from '../auth/models/auth-store'
import { authModels } from '../auth/models/index'
import { createOAuthServices, type OAuthServices } from '../auth/oauth-services'
import { PasswordHasher } from '../auth/helpers/password-hasher'
import { SigningPool } from '../auth/helpers/signing-pool'
import type { Bootstrap } from '../bootstrap/bootstrap-file'
import type { Config } from '../config/load-config'
import { deriveKey } from '../crypto/master-key'
import type { OpenedDataDir } from './data-dir'

export interface AuthParts {
  authStore: AuthStore
  hasher: PasswordHasher
  tokens: AccessTokens
  signing: SigningPool
  oauth: OAuthServices
  /**
   * The bootstrap file's records and the first signing key: run at start on
   * one machine; in a cluster by each host that gains the auth lease, through
   * the replicated log (src/cluster/auth-front.ts).
   */
  prepare(): Promise<void>
  /** Whether the store already holds what prepare() makes sure of: every client and user the bootstrap file names, and a signing key (an earlier owner applied it). */
  prepared(): boolean
}

export function openAuth(config: Config, boot: Bootstrap, opened: OpenedDataDir, publicUrl: string): AuthParts {
  const { masterKey } = opened
  const authStore = openAuthStore(config.dataDir)
  const hasher = new PasswordHasher()
  const tokens = new AccessTokens(authStore, config.accessTokenTtl)
  const signing = new SigningPool(masterKey)
  const idpSecretKey = identityProviderSecretKey(masterKey)
  const oauth = createOAuthServices(authStore, hasher, tokens, signing, publicUrl, idpSecretKey)
  const prepare = async (): Promise<void> => {
    await applyAuthBootstrap(authStore, hasher, boot, deriveKey(masterKey, 'bootstrap secret digest v1'))
    await applyIdentityProviderBootstrap(authStore, boot.identityProviders, idpSecretKey)
    await oauth.keys.ensureActiveKey()
    // Format 1 -> 2 (src/shards/manifest.ts): the refresh-token user index moved to array keys.
    if (opened.formatOnDisk < 2) await oauth.refreshTokens.rebuildUserIndex()
  }
  const models = authModels(authStore)
  const prepared = (): boolean => oauth.keys.active() !== undefined
    && boot.clients.every((c) => models.clients.find(c.client_id) !== undefined)
    && boot.users.every((u) => models.users.find(u.id) !== undefined)
  return { authStore, hasher, tokens, signing, oauth, prepare, prepared }
}
