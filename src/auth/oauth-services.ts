// What the OAuth endpoints share beside the access tokens: the models of the
// auth store and the services over them; built once in main.ts, reached as
// `s.oauth`.
import type { AccessTokens } from './models/access-tokens'
import { AttemptLimiter } from './helpers/attempt-limiter'
import type { AuthStore } from './models/auth-store'
import { AuthorizationCodes } from './models/authorization-codes'
import type { SecretChecks } from './helpers/client-authentication'
import { authModels, type AuthModels } from './models/index'
import { Lockout } from './models/lockout'
import type { PasswordHasher } from './helpers/password-hasher'
import { RefreshTokens } from './models/refresh-tokens'
import { Sessions } from './models/sessions'
import { SigningKeys } from './models/signing-keys'
import { SubscriptionEvents } from './helpers/subscription-events'
import type { KeySigner } from './helpers/signing-pool'
import { UserAuthenticator } from './helpers/user-authentication'
import { VerifiedSecrets } from './helpers/verified-secrets'
import { Federation } from './federation/federation'
import { accountClient } from './models/account-client'
import { Clients } from './models/clients'

export interface OAuthServices extends AuthModels {
  /** `{PUBLIC_URL}/oauth2/v1`, the `iss` of ID tokens and the discovery document */
  issuer: string
  /** cookies get Secure when the public URL is https */
  secureCookies: boolean
  codes: AuthorizationCodes
  refreshTokens: RefreshTokens
  sessions: Sessions
  lockout: Lockout
  /** sign-in by username and password, under the lock-out rules */
  signIn: UserAuthenticator
  /** scrypt client secrets: pool, attempt limiter, recently verified secrets */
  secretChecks: SecretChecks
  keys: SigningKeys
  /** ID token lifetime, seconds (the access token lifetime) */
  idTokenTtl: number
  /** the seam of spec section 6 (see subscription-events.ts) */
  subscriptionEvents: SubscriptionEvents
  /** custom identity providers (OpenID Connect federation) */
  federation: Federation
}

export function createOAuthServices(
  store: AuthStore, hasher: PasswordHasher, tokens: AccessTokens, signer: KeySigner, publicUrl: string,
  /** seals the client secrets of identity providers (federation/sealed-secret.ts) */
  idpSecretKey: Buffer,
): OAuthServices {
  const lockout = new Lockout(store)
  const limiter = new AttemptLimiter()
  const models = authModels(store)
  const refreshTokens = new RefreshTokens(store, tokens)
  return {
    ...models,
    clients: new Clients(store, accountClient(publicUrl)),
    issuer: `${publicUrl}/oauth2/v1`,
    secureCookies: publicUrl.startsWith('https:'),
    codes: new AuthorizationCodes(store, tokens, refreshTokens),
    refreshTokens,
    sessions: new Sessions(store),
    lockout,
    signIn: new UserAuthenticator(models.users, hasher, lockout, limiter),
    secretChecks: { hasher, limiter, verified: new VerifiedSecrets() },
    keys: new SigningKeys(store, signer, tokens.ttl),
    idTokenTtl: tokens.ttl,
    subscriptionEvents: new SubscriptionEvents(),
    federation: new Federation(store, idpSecretKey),
  }
}

/** Periodic clean-up of everything that expires. */
export async function sweepOAuth(o: OAuthServices, tokens: AccessTokens): Promise<void> {
  await tokens.sweep()
  await o.codes.sweep()
  await o.sessions.sweep()
  await o.lockout.sweep()
  await o.keys.prune()
  await o.federation.states.sweep()
}
