// What the federation endpoints share: the providers, links and pending
// sign-ins of the auth store, the discovery and key caches, and the key
// that seals the providers' client secrets.
import type { AuthStore } from '../models/auth-store'
import { IdentityLinks, IdentityProviders, UpstreamStates, type IdentityProviderRecord } from '../models/identity-providers'
import { Discovery } from './discovery'
import { sealSecret, unsealSecret } from './sealed-secret'
import { UpstreamKeys } from './upstream-keys'

export class Federation {
  readonly providers: IdentityProviders
  readonly links: IdentityLinks
  readonly states: UpstreamStates
  readonly discovery = new Discovery()
  readonly keys = new UpstreamKeys()

  constructor(store: AuthStore, private readonly secretKey: Buffer) {
    this.providers = new IdentityProviders(store)
    this.links = new IdentityLinks(store)
    this.states = new UpstreamStates(store)
  }

  seal(provider: string, secret: string | undefined): string | undefined {
    return secret === undefined ? undefined : sealSecret(this.secretKey, provider, secret)
  }

  secretOf(p: IdentityProviderRecord): string | undefined {
    return p.sealedSecret === undefined ? undefined : unsealSecret(this.secretKey, p.id, p.sealedSecret)
  }
}

/** Where the upstream sends the browser back: registered there as the redirect URI. */
export const callbackUrl = (issuer: string, provider: string): string => `${issuer}/idp/${encodeURIComponent(provider)}/callback`
