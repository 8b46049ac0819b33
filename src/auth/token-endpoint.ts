// POST /oauth2/v1/token. Grants: client_credentials. The other grants of the
// spec come with the authorization-service issue and answer
// unsupported_grant_type until then.
import { ApiError } from '../errors'
import type { MethodSpec } from '../front/route'
import { authenticateClient, invalidClient, presentedCredentials } from './client-authentication'
import { clientCredentialsGrant, scopeString } from './scopes'

const oauthError = (error: string, description: string): ApiError =>
  new ApiError('bad_request', description, { oauth: { error, error_description: description } })

const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' }

export const tokenEndpoint: MethodSpec<undefined> = {
  body: 'form',
  handle(s, ex, _params, body) {
    const form = new URLSearchParams(body!.toString('utf8'))
    const grantType = form.get('grant_type')
    if (grantType === null || grantType === '') throw oauthError('invalid_request', 'grant_type is required')
    if (grantType !== 'client_credentials') {
      throw oauthError('unsupported_grant_type', `grant_type "${grantType}" is not supported`)
    }
    const creds = presentedCredentials(ex.headers.authorization, form)
    if (creds === undefined) throw invalidClient('client authentication is required (HTTP Basic or client_id and client_secret)', false)
    authenticateClient(s.authStore, s.hasher, creds)
      .then(async (client) => {
        if (!client.grant_types.includes('client_credentials')) {
          throw oauthError('unauthorized_client', `client "${client.client_id}" may not use the client_credentials grant`)
        }
        const grant = clientCredentialsGrant(s.authStore, client, form.get('scope'))
        const { token } = await s.tokens.issue({ client: client.client_id, tenant: grant.tenant, scopes: [...grant.scopes, `platform.tenant=${grant.tenant}`], sub: undefined })
        ex.json(200, JSON.stringify({
          access_token: token,
          token_type: 'Bearer',
          expires_in: s.tokens.ttl,
          scope: scopeString(grant),
        }), NO_STORE)
      })
      .catch((err: unknown) => ex.error(err))
  },
}
