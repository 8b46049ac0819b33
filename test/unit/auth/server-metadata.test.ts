// RFC 8414's path form (src/auth/endpoints/discovery.ts): the metadata of an
// issuer with a path is at /.well-known/oauth-authorization-server<path>,
// also when PUBLIC_URL itself has a path; the discovery document names the
// endpoints client libraries look for.
import t from 'tap'
import { discoveryDocument, rootWellKnownPath } from '../../../src/auth/endpoints/discovery'

const split = (path: string): string[] => path.split('/').filter((p) => p !== '')

t.test('the path form matches the issuer path exactly', async (t) => {
  const issuer = 'https://id.example/oauth2/v1'
  t.same(rootWellKnownPath(issuer, split('/.well-known/oauth-authorization-server/oauth2/v1')), ['.well-known', 'oauth-authorization-server'])
  t.equal(rootWellKnownPath(issuer, split('/.well-known/oauth-authorization-server')), undefined)
  t.equal(rootWellKnownPath(issuer, split('/.well-known/oauth-authorization-server/oauth2')), undefined)
  t.equal(rootWellKnownPath(issuer, split('/.well-known/openid-configuration/oauth2/v1')), undefined)
  const prefixed = 'https://example.com/platform/oauth2/v1'
  t.same(rootWellKnownPath(prefixed, split('/.well-known/oauth-authorization-server/platform/oauth2/v1')), ['.well-known', 'oauth-authorization-server'])
  t.equal(rootWellKnownPath(prefixed, split('/.well-known/oauth-authorization-server/oauth2/v1')), undefined)
})

t.test('discovery names revocation, introspection and end-session endpoints', async (t) => {
  const doc = discoveryDocument('https://id.example/oauth2/v1', [])
  t.equal(doc.revocation_endpoint, 'https://id.example/oauth2/v1/revoke')
  t.equal(doc.introspection_endpoint, 'https://id.example/oauth2/v1/introspect')
  t.equal(doc.end_session_endpoint, 'https://id.example/oauth2/v1/end_session')
  t.same(doc.introspection_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none'])
})
