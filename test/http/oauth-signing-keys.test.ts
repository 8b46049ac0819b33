// ID token signing keys: ID tokens verify with jose against the published
// JWKS before and after a rotation (the command, through the running server's
// admin endpoint or on the files of a stopped one, and the admin endpoint); the
// previous key stays published until its tokens have expired; keys survive a
// restart and are stored sealed under the master key.
import t from 'tap'
import { execFile } from 'node:child_process'
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose'
import { ROOT } from '../helpers/server'
import {
  adminToken, basic, call, codeFor, removeDir, startOAuthServer, tokenOk, type Json, type OAuthServer,
} from '../helpers/oauth'

const run = promisify(execFile)
const ROTATE = join(ROOT, 'dist', 'src', 'rotate-signing-key.js')

let server: OAuthServer
t.before(async () => {
  server = await startOAuthServer()
})
t.teardown(async () => {
  await server.stop()
  removeDir(server.dataDir)
})

const webAuth = { authorization: basic('web-app', 'web-secret') }
const kids = async (): Promise<string[]> => (await call('GET', `${server.issuer}/.well-known/jwks.json`)).json<{ keys: Json[] }>().keys.map((k) => k.kid as string)

async function idToken(): Promise<string> {
  const { code } = await codeFor(server.issuer, { client_id: 'web-app', scope: 'openid', nonce: 'n' }, 'alice', 'alice-password')
  return (await tokenOk(server.issuer, { grant_type: 'authorization_code', code }, webAuth)).id_token!
}

/** Verifies with a fresh remote JWKS, as a client that has just (re)fetched the keys. */
async function verifies(token: string, issuer = server.issuer): Promise<boolean> {
  try {
    await jwtVerify(token, createRemoteJWKSet(new URL(`${server.issuer}/.well-known/jwks.json`)), {
      issuer, audience: 'web-app', algorithms: ['RS256'],
    })
    return true
  } catch {
    return false
  }
}

const rotateCommand = (extra: string[] = [], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string }> =>
  run(process.execPath, [ROTATE, '--data-dir', join(server.dataDir, 'data'), '--master-key-file', join(server.dataDir, 'secrets', 'master.key'), ...extra], { env: { ...process.env, ...env } })
const failure = (p: Promise<unknown>): Promise<string | undefined> => p.then(() => undefined, (err: { stderr: string }) => err.stderr)
/** The fixture's platform.admin client, the secret in the environment as docs/manual/authorization.md advises. */
const asAdmin = (): Promise<{ stdout: string; stderr: string }> => rotateCommand(['--admin-client-id', 'platform-admin'], { ADMIN_CLIENT_SECRET: 'admin-secret' })

t.test('rotation by the command, then by the admin endpoint; old tokens keep verifying', async (t) => {
  const first = await idToken()
  const k1 = decodeProtectedHeader(first).kid!
  t.same(await kids(), [k1])
  t.ok(await verifies(first), 'verifies before any rotation')

  const refused = await failure(rotateCommand())
  t.match(refused, new RegExp(`^error: .* is in use by the server \\(process ${server.proc.pid}, since .*, listening http.*\\): give a platform.admin client`), 'the running server is not bypassed')
  t.same(await kids(), [k1], 'and nothing changed')
  const { stdout } = await asAdmin()
  const k2 = /active (\S+)/.exec(stdout)![1]!
  t.match(stdout, new RegExp(`retired ${k1}`))
  t.not(k2, k1)
  t.same(await kids(), [k2, k1], 'the new key first, the previous one still published')
  const second = await idToken()
  t.equal(decodeProtectedHeader(second).kid, k2, 'new tokens are signed by the new key at once')
  t.ok(await verifies(second))
  t.ok(await verifies(first), 'a token of the previous key still verifies')

  const admin = await adminToken(server.issuer)
  const rotated = await call('POST', `${server.issuer}/admin/signing-keys`, { authorization: `Bearer ${admin}` })
  t.equal(rotated.status, 201)
  const k3 = rotated.json<Json>().kid as string
  t.same(await kids(), [k3, k2, k1])
  const listing = (await call('GET', `${server.issuer}/admin/signing-keys`, { authorization: `Bearer ${admin}` })).json<Json[]>()
  t.same(listing.map((k) => [k.kid, k.status, k.published]), [[k3, 'active', true], [k2, 'retired', true], [k1, 'retired', true]])
  const third = await idToken()
  t.equal(decodeProtectedHeader(third).kid, k3)
  t.ok(await verifies(first) && await verifies(second) && await verifies(third))

  server.setClockOffset(3600_000 + 4 * 60_000)
  t.same(await kids(), [k3, k2, k1], 'published until the tokens expire, plus a clock margin')
  server.setClockOffset(3600_000 + 6 * 60_000)
  t.same(await kids(), [k3], 'then the retired keys are gone')
  server.setClockOffset(0)

  await server.stop()
  const offline = await rotateCommand()
  const k4 = /active (\S+)/.exec(offline.stdout)![1]!
  t.match(offline.stdout, new RegExp(`retired ${k3}`), 'with the server stopped, the command rotates on the files')
  const before = server.issuer
  server = await startOAuthServer({ dataDir: server.dataDir })
  t.same(await kids(), [k4, k3, k2, k1], 'a restart keeps the keys')
  t.ok(await verifies(third, before), 'a token from before the restart (issued on the old port) verifies')
  t.equal(decodeProtectedHeader(await idToken()).kid, k4, 'and signs with the active one')
  const wrongSecret = await failure(rotateCommand(['--admin-client-id', 'platform-admin'], { ADMIN_CLIENT_SECRET: 'nope' }))
  t.match(wrongSecret, /^error: POST http.*\/oauth2\/v1\/token answered 401/, 'wrong credentials are one line')
})

t.test('with the server stopped, the command refuses a missing or foreign master key', async (t) => {
  await server.stop()
  t.teardown(async () => { server = await startOAuthServer({ dataDir: server.dataDir }) })
  const missing = await failure(rotateCommand(['--master-key-file', join(server.dataDir, 'nope.key')]))
  t.match(missing, /master key file .*not found/)
  const foreign = join(server.dataDir, 'foreign.key')
  writeFileSync(foreign, `${Buffer.alloc(32, 7).toString('base64')}\n`, { mode: 0o600 })
  const wrong = await failure(rotateCommand(['--master-key-file', foreign]))
  t.match(wrong, /does not open signing key/)
})

t.test('signing keys are stored sealed: no private key in the data files', async (t) => {
  const admin = await adminToken(server.issuer)
  t.equal((await call('GET', `${server.issuer}/admin/signing-keys`, { authorization: `Bearer ${admin}` })).status, 200)
  const rsaOid = Buffer.from('06092a864886f70d010101', 'hex')
  const dir = join(server.dataDir, 'data', 'auth')
  const files = readdirSync(dir, { recursive: true }).map((name) => join(dir, String(name))).filter((p) => statSync(p).isFile())
  t.ok(files.length > 0)
  for (const f of files) t.notOk(readFileSync(f).includes(rsaOid), `${f} holds no DER key`)
})
