// Origins as the CORS allow-lists hold them (src/net/origin.ts): what
// --cors-origins, a client's cors_origins and the bootstrap file accept, and
// which origins a client allows (src/auth/helpers/client-cors.ts).
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { clientOrigins } from '../../../src/auth/helpers/client-cors'
import { clientProblem } from '../../../src/auth/helpers/client-rules'
import { checkBootstrap } from '../../../src/auth/helpers/bootstrap-checks'
import { authModels } from '../../../src/auth/models/index'
import { parseBootstrap } from '../../../src/bootstrap/bootstrap-file'
import { loadConfig } from '../../../src/config/load-config'
import { originOf, originProblem } from '../../../src/net/origin'
import { tempAuthStore } from '../../helpers/auth-store'

t.test('an origin is scheme, host and port as browsers send it', async (t) => {
  for (const ok of ['https://app.example', 'http://localhost:3000', 'http://127.0.0.1:8080', 'https://[::1]:8443']) t.equal(originProblem(ok), undefined, ok)
  t.match(originProblem('https://app.example/'), /write "https:\/\/app\.example"/)
  t.match(originProblem('https://App.Example'), /write "https:\/\/app\.example"/)
  t.match(originProblem('https://app.example:443'), /write "https:\/\/app\.example"/)
  t.match(originProblem('https://app.example/path'), /not an origin as browsers send it/)
  t.match(originProblem('ftp://app.example'), /http or https/)
  t.match(originProblem('*'), /not an origin/)
  t.match(originProblem('app.example'), /not an origin/)
  t.equal(originOf('https://app.example/callback?x=1'), 'https://app.example')
  t.equal(originOf('urn:x'), undefined)
})

t.test('--cors-origins / CORS_ORIGINS: none by default, a checked comma-separated list', async (t) => {
  t.same(loadConfig([], {}).corsOrigins, [])
  t.same(loadConfig(['--cors-origins', 'https://a.example, http://localhost:3000'], {}).corsOrigins, ['https://a.example', 'http://localhost:3000'])
  t.same(loadConfig([], { CORS_ORIGINS: 'https://a.example' }).corsOrigins, ['https://a.example'])
  t.throws(() => loadConfig([], { CORS_ORIGINS: 'https://a.example/' }), /CORS_ORIGINS: "https:\/\/a.example\/" is not an origin/)
})

t.test("a client's origins: its redirect URIs' and its cors_origins", async (t) => {
  const client = {
    client_id: 'c', tenant: 'demo', secret: undefined, scopes: [], grant_types: ['authorization_code'],
    redirect_uris: ['https://app.example/cb', 'https://app.example/other', 'http://127.0.0.1:5000/cb'],
  }
  t.same([...clientOrigins(client)], ['https://app.example', 'http://127.0.0.1:5000'])
  t.same([...clientOrigins({ ...client, cors_origins: ['https://spa.example'] })], ['https://app.example', 'http://127.0.0.1:5000', 'https://spa.example'])
  t.match(clientProblem({ ...client, public: true, cors_origins: ['https://spa.example/'] }), /^cors_origins: /)
  t.equal(clientProblem({ ...client, public: true, cors_origins: ['https://spa.example'] }), undefined)
})

t.test('the bootstrap file takes cors_origins under the same rule', async (t) => {
  const { store } = tempAuthStore(t)
  const doc = JSON.parse(readFileSync(join(__dirname, '..', '..', 'fixtures', 'oauth-bootstrap.json'), 'utf8')) as { clients: Record<string, unknown>[] }
  doc.clients[0]!.cors_origins = ['https://spa.example']
  const boot = parseBootstrap(doc)
  t.same(boot.clients[0]!.cors_origins, ['https://spa.example'])
  t.same(boot.clients[1]!.cors_origins, [], 'none when not given')
  checkBootstrap(boot, authModels(store))
  doc.clients[0]!.cors_origins = ['https://spa.example/app']
  t.throws(() => checkBootstrap(parseBootstrap(doc), authModels(store)), /clients\[0\] cors_origins: "https:\/\/spa\.example\/app" is not an origin/)
  doc.clients[0]!.cors_origins = 'https://spa.example'
  t.throws(() => parseBootstrap(doc), /clients\[0\]\.cors_origins must be an array/)
})
