// An independent OpenID provider as the upstream of the federation tests:
// oidc-provider (npm) with its development sign-in pages, any login name
// accepted as the account. It is reached through a small proxy of the test
// that can misbehave on purpose: tamper with the ID token, change the nonce
// the provider receives; and under /other it announces another issuer
// (its URL with /other) than the one signing its ID tokens. Its token
// endpoint can also fail: answer an HTML page, reset the connection, or
// never answer.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Misbehaviour = 'none' | 'tamper-id-token' | 'other-nonce' | 'token-html' | 'token-reset' | 'token-hang'

export interface UpstreamOp {
  /** the issuer, the proxy's URL */
  issuer: string
  /** `${issuer}/other`: its discovery document names this issuer, its ID tokens the real one */
  otherIssuer: string
  misbehave: Misbehaviour
  close(): Promise<void>
}

const listen = (server: Server): Promise<number> =>
  new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)))

const readAll = async (stream: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = []
  for await (const c of stream) chunks.push(c as Buffer)
  return Buffer.concat(chunks)
}

/** Flips one character of the ID token's payload: the signature no longer matches. */
function tamper(body: string): string {
  const json = JSON.parse(body) as { id_token?: string }
  if (json.id_token === undefined) return body
  const [h, p, s] = json.id_token.split('.')
  const claims = JSON.parse(Buffer.from(p!, 'base64url').toString('utf8')) as Record<string, unknown>
  claims.sub = `${String(claims.sub)}-forged`
  json.id_token = `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}`
  return JSON.stringify(json)
}

export async function startUpstreamOp(callbackUrls: string[], clientSecret: string): Promise<UpstreamOp> {
  const { default: Provider } = await import('oidc-provider')
  const proxy = createServer()
  const proxyPort = await listen(proxy)
  const issuer = `http://127.0.0.1:${proxyPort}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'platform', client_secret: clientSecret, redirect_uris: callbackUrls,
      grant_types: ['authorization_code'], response_types: ['code'],
    }],
    async findAccount(_ctx: unknown, id: string) {
      return {
        accountId: id,
        async claims() {
          return { sub: id, preferred_username: id, email: `${id}@upstream.example`, email_verified: !id.startsWith('unverified') }
        },
      }
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'] },
    conformIdTokenClaims: false,
    cookies: { keys: ['upstream-test-cookie-key'] },
    pkce: { required: () => true },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
  })
  const opServer = createServer(provider.callback())
  const opPort = await listen(opServer)
  const op: UpstreamOp = {
    issuer, otherIssuer: `${issuer}/other`, misbehave: 'none',
    async close() {
      await Promise.all([proxy, opServer].map((s) => new Promise((resolve) => { s.closeAllConnections(); s.close(resolve) })))
    },
  }
  proxy.on('request', (req, res) => {
    void (async () => {
      let path = req.url ?? '/'
      const other = path.startsWith('/other/')
      if (other) path = path.slice('/other'.length)
      if (op.misbehave === 'other-nonce' && path.startsWith('/auth?')) {
        const u = new URL(path, issuer)
        u.searchParams.set('nonce', 'a-nonce-the-platform-never-sent')
        path = `${u.pathname}${u.search}`
      }
      const body = await readAll(req)
      if (path === '/token' && op.misbehave === 'token-html') {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body>Bad gateway</body></html>')
        return
      }
      if (path === '/token' && op.misbehave === 'token-reset') {
        req.socket.resetAndDestroy()
        return
      }
      // never answered; close() ends the connection
      if (path === '/token' && op.misbehave === 'token-hang') return
      const upstream = httpRequest({ host: '127.0.0.1', port: opPort, method: req.method, path, headers: req.headers }, (answer) => {
        void (async () => {
          let out = await readAll(answer)
          if (op.misbehave === 'tamper-id-token' && path === '/token') out = Buffer.from(tamper(out.toString('utf8')))
          if (other && path === '/.well-known/openid-configuration') {
            out = Buffer.from(out.toString('utf8').replace(`"issuer":"${issuer}"`, `"issuer":"${op.otherIssuer}"`))
          }
          const headers = { ...answer.headers }
          delete headers['content-length']
          delete headers['transfer-encoding']
          res.writeHead(answer.statusCode ?? 502, { ...headers, 'content-length': String(out.length) }).end(out)
        })()
      })
      upstream.end(body)
    })()
  })
  return op
}
