// The account page's client (docs/manual/account-page.md): built in, made
// from PUBLIC_URL, never stored. A public client (PKCE) whose only redirect
// URI is the page itself; it holds no service scope, so its tokens act in the
// graph only as their user, on the user's own consents. It serves every
// tenant its user is a member of without a subscription (src/auth/helpers/scopes.ts).
import type { ClientRecord } from './auth-store'

export const ACCOUNT_CLIENT_ID = 'platform-account'
/** Where the product serves the page, under PUBLIC_URL. */
export const ACCOUNT_PATH = '/account'

export function accountClient(publicUrl: string): ClientRecord {
  return {
    // Of no tenant: '' is never a tenant id, so no tenant's rules or clean-ups take it for one of theirs.
    client_id: ACCOUNT_CLIENT_ID, tenant: '', secret: undefined,
    redirect_uris: [`${publicUrl}${ACCOUNT_PATH}`], scopes: [], grant_types: ['authorization_code'],
  }
}

export const isAccountClient = (client: ClientRecord | undefined): boolean => client?.client_id === ACCOUNT_CLIENT_ID

/** Why the admin API or the bootstrap file may not make or change client `id`, or undefined. */
export function builtInClientRefusal(id: string): string | undefined {
  return id === ACCOUNT_CLIENT_ID ? `client "${id}" is built in (the account page's client) and cannot be registered, changed or deleted` : undefined
}
