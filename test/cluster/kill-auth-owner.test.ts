// Scenario: kill -9 of the host holding the auth lease while clients ask for
// tokens and use them. The survivor, which followed the auth store's stream,
// claims the lease once it has expired: token requests and bearer checks
// resume within two lease periods + 2 s (the recovery goal), and the state is the one the killed
// host acknowledged: a token issued before is accepted, a revoked one stays
// refused, a redeemed code cannot be redeemed again, and the failed sign-ins
// counted before the kill still count. Twice: the killed host, restarted,
// follows the auth store again and is the survivor of the second kill. Both
// hosts share one public URL (each has its own --cluster-url), so the issuer
// a client knows stays the same.
import t from 'tap'
import { AUTH_LEASE_KEY, type LeaseValue } from '../../src/contract/cluster-names'
import { call, codeFor, OAUTH_BOOTSTRAP, postForm, tokenOk, VIEW, WEB_AUTH, type Json } from '../helpers/oauth'
import type { Host } from './helpers/cluster'
import { clusterFile } from './helpers/leases'
import { sleep, until } from '../../bench/wait'
import { recoveryLimitMs } from './helpers/recovery'

/** The one public URL both hosts are given: what clients and ID tokens know as the issuer. */
const PUBLIC_URL = 'http://oauth.cluster.test'
const { skip, cluster, leases: clusterLeases } = clusterFile(t, { bootstrap: OAUTH_BOOTSTRAP, publicUrl: PUBLIC_URL })

/** Where the test reaches host `h`'s OAuth endpoints (its own address; the public name does not resolve here). */
const issuer = (h: Host): string => `${h.url}/oauth2/v1`

async function discoveredIssuer(h: Host): Promise<unknown> {
  const res = await call('GET', `${issuer(h)}/.well-known/openid-configuration`)
  return res.status === 200 ? res.json<Json>().issuer : `status ${res.status}`
}

/** A graph listing with a malformed limit: 400 once the token is accepted, 401 when it is not, 503 without an auth owner. */
async function tokenCheck(h: Host, token: string): Promise<number> {
  return (await call('GET', `${h.url}/graph/v1/demo/nodes/core/customer?limit=many`, { authorization: `Bearer ${token}` })).status
}

const signIn = (h: Host, username: string, pw: string): Promise<{ status: number; json: <T>() => T }> =>
  postForm(`${issuer(h)}/token`, { grant_type: 'password', username, password: pw })

/** Token requests and bearer checks through `h` in a loop; when each kind last succeeded, and what else was answered. */
function startOAuthLoad(h: Host, token: string): { issuedAt: number[]; checkedAt: number[]; others: Map<string, number>; stop(): Promise<void> } {
  const load = { issuedAt: [] as number[], checkedAt: [] as number[], others: new Map<string, number>(), stop: async () => undefined }
  let running = true
  const other = (what: string): void => { load.others.set(what, (load.others.get(what) ?? 0) + 1) }
  const loops = [
    (async () => {
      while (running) {
        const res = await postForm(`${issuer(h)}/token`, { grant_type: 'client_credentials', scope: VIEW }, WEB_AUTH).catch(() => undefined)
        if (res?.status === 200) load.issuedAt.push(Date.now())
        else {
          other(`token ${res?.status ?? 'error'}`)
          await sleep(50)
        }
      }
    })(),
    (async () => {
      while (running) {
        const status = await tokenCheck(h, token).catch(() => 0)
        if (status === 400) load.checkedAt.push(Date.now())
        else {
          other(`check ${status}`)
          await sleep(50)
        }
      }
    })(),
  ]
  load.stop = async () => {
    running = false
    await Promise.all(loops)
  }
  return load
}

for (const round of [1, 2]) t.test(`kill -9 of the auth owner while clients use OAuth (round ${round})`, { skip }, async (t) => {
  const leases = await clusterLeases()
  // Each round locks out a user of its own (the first round's stays locked).
  const user = `locked${round}`
  // The second round's survivor is the host restarted after the first: it serves (its auth store followed) before the kill.
  for (const h of cluster.hosts) await until(`${h.nodeId} ready`, async () => (await call('GET', `${h.url}/health/ready`)).status === 200, 30_000, 200)
  const entry = await leases.kv.get(AUTH_LEASE_KEY)
  const node = entry?.operation === 'PUT' ? entry.json<LeaseValue>().node : undefined
  const owner = cluster.hosts.find((h) => h.nodeId === node)
  if (owner === undefined) throw new Error(`no host holds the auth lease (${node})`)
  const survivor = cluster.hosts.find((h) => h !== owner)!
  t.comment(`${owner.nodeId} holds the auth lease; ${survivor.nodeId} survives`)

  // Through the survivor: every request is handed to the owner, whose store and stream take it.
  const kept = (await tokenOk(issuer(survivor), { grant_type: 'client_credentials', scope: VIEW }, WEB_AUTH)).access_token
  const revoked = (await tokenOk(issuer(survivor), { grant_type: 'client_credentials', scope: VIEW }, WEB_AUTH)).access_token
  t.equal((await postForm(`${issuer(survivor)}/revoke`, { token: revoked }, WEB_AUTH)).status, 200, 'a token revoked before the kill')
  t.equal(await tokenCheck(survivor, revoked), 401, 'refused before the kill')
  t.equal(await discoveredIssuer(survivor), `${PUBLIC_URL}/oauth2/v1`, 'the issuer is the shared public URL\'s')
  // The sign-in form posted from a page of the public origin, as a browser would.
  const { code } = await codeFor(issuer(owner), { client_id: 'web-app', scope: VIEW }, 'alice', 'alice-password', PUBLIC_URL)
  const redeemed = await tokenOk(issuer(survivor), { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.equal(await tokenCheck(survivor, redeemed.access_token), 400, 'a code redeemed before the kill')
  for (let i = 0; i < 8; i++) t.equal((await signIn(i % 2 === 0 ? owner : survivor, user, 'wrong')).status, 400)

  const load = startOAuthLoad(survivor, kept)
  await sleep(1500)
  t.ok(load.issuedAt.length > 0 && load.checkedAt.length > 0, `tokens issued (${load.issuedAt.length}) and checked (${load.checkedAt.length}) before the kill`)
  const killedAt = Date.now()
  await owner.kill()
  const limit = killedAt + recoveryLimitMs(cluster.leaseMs)
  const resumed = (at: number[]): number | undefined => at.find((x) => x > killedAt + 100)
  while ((resumed(load.issuedAt) === undefined || resumed(load.checkedAt) === undefined) && Date.now() < limit + 5000) await sleep(50)
  const issued = resumed(load.issuedAt)
  const checked = resumed(load.checkedAt)
  t.ok(issued !== undefined && issued <= limit, `token requests resumed ${issued === undefined ? 'never' : `${issued - killedAt} ms`} after the kill (limit ${recoveryLimitMs(cluster.leaseMs)} ms)`)
  t.ok(checked !== undefined && checked <= limit, `bearer checks resumed ${checked === undefined ? 'never' : `${checked - killedAt} ms`} after the kill`)
  await load.stop()
  t.comment(`other answers during the load: ${JSON.stringify([...load.others])}`)

  t.equal(await tokenCheck(survivor, kept), 400, 'the token issued before the kill is accepted')
  t.equal(await tokenCheck(survivor, revoked), 401, 'the token revoked before the kill stays refused')
  const again = await postForm(`${issuer(survivor)}/token`, { grant_type: 'authorization_code', code }, WEB_AUTH)
  t.equal(again.status, 400, 'the redeemed code cannot be redeemed again')
  t.equal(again.json<Json>().error, 'invalid_grant')
  t.equal(await tokenCheck(survivor, redeemed.access_token), 401, 'and its replay revokes what it gave, as on one host')
  // 8 failures before the kill + 7 after = 15: blocked only if the count carried over.
  for (let i = 0; i < 7; i++) t.equal((await signIn(survivor, user, 'wrong')).status, 400)
  const blocked = await signIn(survivor, user, `${user}-password`)
  t.equal(blocked.status, 400, 'the right password is refused after 15 failures across the failover')
  t.equal(blocked.json<Json>().type, 'too_many_attempts', 'the lock-out counter carried over')

  t.equal(await discoveredIssuer(survivor), `${PUBLIC_URL}/oauth2/v1`, 'the survivor, now the owner, names the same issuer')
  await owner.restart()
})
