// The authorization service in a cluster (docs/manual/cluster.md): two hosts on
// loopback sharing one JetStream nats-server, the master key and the KEK.
// The first host holds the auth lease and serves every OAuth request; the
// other hands them over and asks the owner about every bearer token, so
// tokens, revocations, lock-out counts and single-use codes are one state.
// A bulk request sent to the other host is served as on the owner: its lines
// wait for the owner's verdict, a refused token gets the request's 401/403.
import t from 'tap'
import { copyFileSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { loadOrCreateMasterKey } from '../../src/crypto/master-key'
import { natsServerAvailable, startNatsServer, type NatsServer } from '../helpers/nats-server'
import { call, codeFor, MANAGE, postForm, startOAuthServer, tokenOk, VIEW, WEB_AUTH, type Json, type OAuthServer } from '../helpers/oauth'
import { bulk, lineOf, type Op } from '../helpers/bulk'
import { createConsent } from '../helpers/client'
import { removeDir, tempDir } from '../helpers/server'

const skip = natsServerAvailable() ? false : 'nats-server is not installed (/usr/sbin/nats-server)'
const hosts: OAuthServer[] = []
let nats: NatsServer | undefined
const shared = tempDir('cluster-auth-')

t.teardown(async () => {
  for (const h of hosts) {
    await h.stop()
    removeDir(h.dataDir)
  }
  await nats?.stop()
  removeDir(shared)
})

async function startHosts(): Promise<[OAuthServer, OAuthServer]> {
  nats = await startNatsServer()
  const kek = join(shared, 'kek.key')
  loadOrCreateMasterKey(kek)
  const clusterArgs = (node: string): string[] => ['--nats-url', nats!.url, '--node-id', node, '--kek-file', kek, '--lease-ms', '3000']
  const a = await startOAuthServer({ args: clusterArgs('host-a') })
  hosts.push(a)
  // Every host shares the master key (signing keys, blind indexes).
  const dirB = tempDir('oauth-test-')
  mkdirSync(join(dirB, 'secrets'), { recursive: true })
  copyFileSync(join(a.dataDir, 'secrets', 'master.key'), join(dirB, 'secrets', 'master.key'))
  const b = await startOAuthServer({ dataDir: dirB, args: clusterArgs('host-b') })
  hosts.push(b)
  return [a, b]
}

/** A graph listing with a malformed limit: 400 once the token is accepted, 401 when it is not (the shards play no part). */
async function tokenCheck(host: OAuthServer, token: string): Promise<number> {
  const res = await call('GET', `${host.url}/graph/v1/demo/nodes/core/customer?limit=many`, { authorization: `Bearer ${token}` })
  return res.status
}

const putNode = (id: string, body: Json, consent: string): Op => ({ method: 'PUT', path: `nodes/core/customer/${id}`, headers: { 'consent-reference': consent }, body })

/** The node's status and body, read through `host`. */
async function readNode(host: OAuthServer, token: string, id: string): Promise<{ status: number; body: Json | undefined }> {
  const res = await call('GET', `${host.url}/graph/v1/demo/nodes/core/customer/${id}`, { authorization: `Bearer ${token}` })
  return { status: res.status, body: res.status === 200 ? res.json<Json>() : undefined }
}

const password = (issuer: string, pw: string): Promise<{ status: number; json: <T>() => T }> =>
  postForm(`${issuer}/token`, { grant_type: 'password', username: 'locked1', password: pw })

t.test('one authorization service across two hosts', { skip }, async (t) => {
  const [a, b] = await startHosts()

  t.test('a token issued through either host is accepted on both', async (t) => {
    const viaB = await tokenOk(b.issuer, { grant_type: 'client_credentials', scope: VIEW }, WEB_AUTH)
    const viaA = await tokenOk(a.issuer, { grant_type: 'client_credentials', scope: VIEW }, WEB_AUTH)
    for (const token of [viaA.access_token, viaB.access_token]) {
      t.equal(await tokenCheck(a, token), 400, 'accepted on host A')
      t.equal(await tokenCheck(b, token), 400, 'accepted on host B')
    }
    t.equal(await tokenCheck(b, 'not-a-token'), 401, 'an unknown token is refused on host B')
  })

  t.test('a revocation through host A is in force on host B when it is answered', async (t) => {
    const { access_token: token } = await tokenOk(b.issuer, { grant_type: 'client_credentials', scope: VIEW }, WEB_AUTH)
    t.equal(await tokenCheck(b, token), 400)
    const revoked = await postForm(`${a.issuer}/revoke`, { token }, WEB_AUTH)
    t.equal(revoked.status, 200)
    t.equal(await tokenCheck(b, token), 401, 'refused on host B at once')
    t.equal(await tokenCheck(a, token), 401, 'and on host A')
  })

  t.test('failed sign-ins split across the hosts count as on one host', async (t) => {
    for (let i = 0; i < 14; i++) t.equal((await password(i % 2 === 0 ? a.issuer : b.issuer, 'wrong')).status, 400)
    t.equal((await password(b.issuer, 'locked1-password')).status, 200, 'after 14 failures the right password works (and clears the count)')
    for (let i = 0; i < 15; i++) t.equal((await password(i % 2 === 0 ? b.issuer : a.issuer, 'wrong')).status, 400)
    for (const host of [a, b]) {
      const res = await password(host.issuer, 'locked1-password')
      t.equal(res.status, 400, 'blocked after 15 failures, 7 or 8 per host')
      t.equal(res.json<Json>().type, 'too_many_attempts')
    }
  })

  t.test('a code redeemed twice across the hosts fails the second time and revokes the first tokens', async (t) => {
    const { code } = await codeFor(a.issuer, { client_id: 'web-app', scope: VIEW }, 'alice', 'alice-password')
    const first = await tokenOk(b.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
    t.equal(await tokenCheck(a, first.access_token), 400)
    const again = await postForm(`${a.issuer}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)
    t.equal(again.status, 400)
    t.equal(again.json<Json>().error, 'invalid_grant')
    t.equal(await tokenCheck(b, first.access_token), 401, 'the first exchange\'s token is revoked on host B')
  })

  t.test('a bulk request to host B: its lines wait for the owner\'s verdict and are answered as on the owner', async (t) => {
    const { access_token: token } = await tokenOk(a.issuer, { grant_type: 'client_credentials', scope: `${VIEW} ${MANAGE}` }, WEB_AUTH)
    const consent = await createConsent(b.url, 'demo', token, 'bulk-through-b')
    const res = await bulk(b.url, 'demo', token, [putNode('bk1', { name: 'Ann' }, consent), putNode('bk2', { name: 'Bo' }, consent)].map(lineOf).join(''))
    t.equal(res.status, 200)
    t.same(res.lines, [{ status: 204 }, { status: 204 }], 'one answer line per line')
    for (const host of [a, b]) t.same((await readNode(host, token, 'bk1')).body?.name, 'Ann', `written through B, read through ${host === a ? 'A' : 'B'}`)
    // More than the socket holds at once: the intake is paused while the owner answers, then streams.
    const n = 3000
    const many = Array.from({ length: n }, (_, i) => lineOf(putNode(`bm${i % 100}`, { name: `N${i}` }, consent)))
    const big = await bulk(b.url, 'demo', token, many)
    t.equal(big.status, 200)
    t.equal(big.lines.length, n, 'every line answered')
    t.ok(big.lines.every((l) => l.status === 204), 'every line 204')
    t.equal((await readNode(a, token, 'bm99')).body?.name, `N${n - 1}`, 'applied in order')
  })

  t.test('a bulk request to host B with a refused token: 401 or 403 for the request, nothing stored', async (t) => {
    const { access_token: token } = await tokenOk(a.issuer, { grant_type: 'client_credentials', scope: `${VIEW} ${MANAGE}` }, WEB_AUTH)
    const consent = await createConsent(a.url, 'demo', token, 'bulk-refused')
    const body = lineOf(putNode('bx1', { name: 'X' }, consent))
    const bad = await bulk(b.url, 'demo', 'not-a-token', body)
    t.equal(bad.status, 401, 'an unknown token')
    t.match(bad.text, /invalid, expired or revoked/)
    t.equal((await bulk(b.url, 'demo', 'not-a-token', body, '', 'application/json')).status, 401, '401 before 415')
    // A user token of tenant acme, with the manage scope there.
    const { code } = await codeFor(a.issuer, { client_id: 'web-app', scope: 'platform.tenant=acme' }, 'bob', 'bob-password')
    const acme = await tokenOk(b.issuer, { grant_type: 'authorization_code', code }, WEB_AUTH)
    const other = await bulk(b.url, 'demo', acme.access_token, body)
    t.equal(other.status, 403, 'a token of another tenant')
    t.equal(other.lines.length, 0, 'no line answered')
    t.equal((await bulk(b.url, 'demo', token, '', '?answers=some')).status, 400, 'an unknown answers mode is a 400 once the token passes')
    for (const host of [a, b]) t.equal((await readNode(host, token, 'bx1')).status, 404, 'nothing stored')
  })

  t.test('discovery through host B is the owner\'s', async (t) => {
    const res = await call('GET', `${b.issuer}/.well-known/openid-configuration`)
    t.equal(res.status, 200)
    t.equal(res.json<Json>().issuer, a.issuer, 'one issuer: the auth owner\'s')
  })
})
