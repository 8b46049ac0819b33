// A standard client library, openid-client (ESM-only, loaded with a dynamic
// import), against the discovery document, unchanged: the code flow with
// PKCE and a validated ID token, refresh, client credentials, userinfo and
// revocation. Loopback http is allowed for the test.
import t from 'tap'
import { MANAGE, oauthServerForFile, UserAgent, VIEW } from '../helpers/oauth'

const env = oauthServerForFile(t)
const REDIRECT = 'http://127.0.0.1:65530/callback'

async function configuration(): Promise<{ oidc: typeof import('openid-client'); config: import('openid-client').Configuration }> {
  const oidc = await import('openid-client')
  const config = await oidc.discovery(new URL(env.issuer), 'web-app', 'web-secret', oidc.ClientSecretBasic('web-secret'), {
    execute: [oidc.allowInsecureRequests],
  })
  return { oidc, config }
}

t.test('discovery', async (t) => {
  const { config } = await configuration()
  const meta = config.serverMetadata()
  t.equal(meta.issuer, env.issuer)
  t.equal(meta.token_endpoint, `${env.issuer}/token`)
  t.ok(meta.supportsPKCE(), 'S256 is advertised')
})

t.test('code flow with PKCE, then refresh, userinfo and revocation', async (t) => {
  const { oidc, config } = await configuration()
  const codeVerifier = oidc.randomPKCECodeVerifier()
  const state = oidc.randomState()
  const nonce = oidc.randomNonce()
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT, scope: `openid ${VIEW} ${MANAGE}`, state, nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier), code_challenge_method: 'S256',
  })
  const location = await new UserAgent(env.issuer).authorizeAt(url.href, 'alice', 'alice-password')
  const tokens = await oidc.authorizationCodeGrant(config, new URL(location), { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce })
  const claims = tokens.claims()!
  t.equal(claims.sub, 'alice')
  t.equal(claims.aud, 'web-app')
  t.equal(claims.iss, env.issuer)
  t.equal(claims.email, 'alice@example.com')
  t.type(tokens.refresh_token, 'string')
  t.equal(tokens.token_type, 'bearer')
  t.same(tokens.scope!.split(' ').sort(), [MANAGE, VIEW, 'openid', 'platform.tenant=demo'].sort())

  const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)
  t.equal(info.email, 'alice@example.com')

  const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { scope: VIEW })
  t.equal(refreshed.scope, `${VIEW} platform.tenant=demo`)
  t.equal(refreshed.refresh_token, undefined)

  await oidc.tokenRevocation(config, tokens.refresh_token!)
  const revoked = await oidc.refreshTokenGrant(config, tokens.refresh_token!).then(() => undefined, (err: unknown) => err)
  t.match(revoked, { error: 'invalid_grant' }, 'revoked')

  const tampered = new URL(location)
  tampered.searchParams.set('state', 'other')
  const mismatch = await oidc.authorizationCodeGrant(config, tampered, { pkceCodeVerifier: codeVerifier, expectedState: state }).then(() => undefined, (err: unknown) => err)
  t.ok(mismatch instanceof Error, 'the library checks state')
})

t.test('client credentials', async (t) => {
  const { oidc, config } = await configuration()
  const tokens = await oidc.clientCredentialsGrant(config, { scope: `${VIEW} platform.tenant=acme` })
  t.equal(tokens.scope, `${VIEW} platform.tenant=acme`)
  t.equal(tokens.expires_in, 3600)
})
