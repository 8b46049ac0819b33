// A data subject's own routes over HTTP (docs/manual/graph-api.md, "A data
// subject's own consents and data"): the consent list, the export and the
// erasure, each with the subject's user token and with a manage-scope token
// naming the subject, and each refused for other subjects and other tenants.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { call, createConsent, Graph, type Answer } from '../helpers/client'
import { FIXTURE_BOOTSTRAP, getToken, removeDir, startServer, tempDir, type Server } from '../helpers/server'
import { postForm } from '../helpers/oauth'

type Json = Record<string, unknown>

let server: Server
let tenantToken: string
let acmeToken: string
const G = (tenant = 'demo'): string => `${server.url}/graph/v1/${tenant}`
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

/** A password-grant user token of one tenant. */
async function userToken(username: string, tenant: string): Promise<string> {
  const res = await postForm(`${server.url}/oauth2/v1/token`, { grant_type: 'password', username, password: `${username}-password`, scope: `platform.tenant=${tenant}` })
  if (res.status !== 200) throw new Error(`no token for ${username}: ${res.text}`)
  return res.json<Json>().access_token as string
}

t.before(async () => {
  const dir = tempDir('subject-rights-')
  // The fixture bootstrap with end customers: readers (no manage scope) act as the subject of their `sub`.
  const boot = JSON.parse(readFileSync(FIXTURE_BOOTSTRAP, 'utf8')) as { users: Json[] }
  boot.users.push(
    { id: 'u-bob', username: 'bob', password: 'bob-password', email: 'bob@example.com', tenants: { demo: ['graph-reader'], acme: ['graph-reader'] } },
    { id: 'u-eve', username: 'eve', password: 'eve-password', email: 'eve@example.com', tenants: { demo: ['graph-reader'] } },
    { id: 'u-carol', username: 'carol', password: 'carol-password', email: 'carol@example.com', tenants: { acme: ['graph-reader'] } },
  )
  const file = join(dir, 'bootstrap.json')
  writeFileSync(file, JSON.stringify(boot))
  server = await startServer({ dataDir: dir, args: ['--bootstrap', file] })
  tenantToken = await getToken(server.url)
  acmeToken = await getToken(server.url, 'platform.tenant=acme')
})
t.teardown(async () => {
  await server.stop()
  removeDir(server.dataDir)
})

const consents = (headers: Record<string, string>, query = '', tenant = 'demo'): Promise<Answer> => call('GET', `${G(tenant)}/consents${query}`, headers)
const exportOf = (headers: Record<string, string>, query = '', tenant = 'demo'): Promise<Answer> => call('GET', `${G(tenant)}/subject/export${query}`, headers)
const erase = (headers: Record<string, string>, query = '', tenant = 'demo'): Promise<Answer> => call('DELETE', `${G(tenant)}/subject${query}`, headers)

t.test("a subject lists, exports and erases their own data, and nobody else's", async (t) => {
  const kept = await createConsent(server.url, 'demo', tenantToken, 'u-bob')
  const revoked = await createConsent(server.url, 'demo', tenantToken, 'u-bob')
  const eves = await createConsent(server.url, 'demo', tenantToken, 'u-eve')
  const acmeRef = await createConsent(server.url, 'acme', acmeToken, 'u-bob')
  const bob = new Graph(server.url, 'demo', tenantToken, kept)
  const old = new Graph(server.url, 'demo', tenantToken, revoked)
  const eve = new Graph(server.url, 'demo', tenantToken, eves)
  t.equal((await bob.put('nodes/core/customer/bob', { name: 'Bob Plaintext', email: 'bob@example.com' })).status, 204)
  t.equal((await bob.post('counters/core/customer/bob/core/product/tea/core/viewed/v1/views')).status, 200)
  t.equal((await old.put('nodes/core/customer/bob-old', { name: 'Old Bob' })).status, 204)
  t.equal((await eve.put('nodes/core/customer/eve', { name: 'Eve Secret' })).status, 204)
  t.equal((await call('PUT', `${G('acme')}/nodes/core/customer/bob-acme`, { ...bearer(acmeToken), 'content-type': 'application/json', 'consent-reference': acmeRef }, '{"name":"Acme Bob"}')).status, 204)
  t.equal((await call('DELETE', `${G()}/consents/${revoked}`, bearer(tenantToken))).status, 204)

  const bobDemo = bearer(await userToken('bob', 'demo'))
  const bobAcme = bearer(await userToken('bob', 'acme'))
  const tenant = bearer(tenantToken)

  t.test('the consent list', async (t) => {
    const mine = await consents(bobDemo)
    t.equal(mine.status, 200)
    const list = mine.json<Json[]>()
    t.same(list.map((c) => c.consentReference).sort(), [kept, revoked].sort(), 'both of bob\'s consents, none of eve\'s or acme\'s')
    const byRef = new Map(list.map((c) => [c.consentReference, c]))
    t.match(byRef.get(kept), { subject: 'u-bob', status: 'granted', revokedProperties: [], created: Number, changed: Number, clientId: 'demo-enricher' })
    t.match(byRef.get(revoked), { status: 'revoked' })
    t.ok((byRef.get(revoked)!.changed as number) >= (byRef.get(revoked)!.created as number), 'the revocation is its last change')
    t.same((await consents(tenant, '?subject=u-bob')).json(), list, 'the tenant names the subject')
    const first = (await consents(bobDemo, '?limit=1')).json<Json[]>()
    t.equal(first.length, 1, 'limit')
    const rest = (await consents(bobDemo, `?after=${first[0]!.consentReference as string}`)).json<Json[]>()
    t.same([...first, ...rest], list, 'after continues where the page ended')
    t.same((await consents(tenant, '?subject=nobody-here')).json(), [], 'a subject without consents')
    t.same((await consents(bobAcme, '', 'acme')).json<Json[]>().map((c) => c.consentReference), [acmeRef], "acme's list holds acme's consent only")
  })

  t.test('the export', async (t) => {
    const res = await exportOf(bobDemo)
    t.equal(res.status, 200)
    t.match(res.headers['content-type'], /application\/json/)
    const all = res.json<Json[]>()
    t.same(all[0], {
      kind: 'subject', subject: 'u-bob', tenant: 'demo',
      account: { username: 'bob', email: 'bob@example.com', tenants: { demo: ['graph-reader'], acme: ['graph-reader'] }, identityProviders: [] },
    }, 'the account first, every tenant of it for the user')
    t.notMatch(res.text, /scrypt|password/, 'no password hash')
    const consentLines = all.filter((e) => e.kind === 'consent')
    t.same(consentLines.map((c) => c.consentReference).sort(), [kept, revoked].sort())
    t.match(consentLines.find((c) => c.consentReference === revoked), { status: 'revoked', erased: true })
    const nodes = all.filter((e) => e.kind === 'node')
    t.same(nodes.map((n) => (n.node as Json).id).sort(), ['bob'], "the granted consent's node (the product is the tenant's)")
    t.same(nodes[0]!.properties, { name: 'Bob Plaintext', email: 'bob@example.com' }, 'decrypted')
    t.equal(nodes[0]!.owner, kept)
    const relations = all.filter((e) => e.kind === 'relation')
    t.equal(relations.length, 1)
    t.match(relations[0], { from: { id: 'bob' }, to: { id: 'tea' }, rel: { id: 'v1' }, owner: kept, properties: { views: 1 } })
    t.notMatch(res.text, /Old Bob|Eve Secret|Acme Bob/, "no revoked data, nor another subject's or tenant's")

    const lines = await exportOf({ ...bobDemo, accept: 'application/x-ndjson' })
    t.match(lines.headers['content-type'], /application\/x-ndjson/)
    t.same(lines.text.trim().split('\n').map((l) => JSON.parse(l) as unknown), all, 'NDJSON: the same elements, one per line')

    const byTenant = (await exportOf(tenant, '?subject=u-bob')).json<Json[]>()
    t.same((byTenant[0]!.account as Json).tenants, { demo: ['graph-reader'] }, "the tenant sees only its own tenant of the user's account")
    t.same(byTenant.slice(1), all.slice(1))
    t.equal((await exportOf(tenant, '?subject=stranger')).json<Json[]>()[0]!.account, null, 'no account for a subject who is no user')
    const acme = await exportOf(bobAcme, '', 'acme')
    t.notMatch(acme.text, /Bob Plaintext/, "acme's export holds no demo data")
    t.match(acme.text, /Acme Bob/)
  })

  t.test('every route refuses other subjects and other tenants', async (t) => {
    const eveDemo = bearer(await userToken('eve', 'demo'))
    const carolAcme = bearer(await userToken('carol', 'acme'))
    const viewOnly = bearer(await getToken(server.url, 'platform.profile_graph_view'))
    const routes = [['list', consents], ['export', exportOf], ['erase', erase]] as const
    for (const [what, route] of routes) {
      const other = await route(eveDemo, '?subject=u-bob')
      t.equal(other.status, 403, `${what}: a user token naming another subject`)
      t.equal(other.json<Json>().type, 'forbidden')
      t.equal((await route(bobDemo, '', 'acme')).status, 403, `${what}: a user token of another tenant`)
      t.equal((await route(carolAcme, '?subject=u-bob')).status, 403, `${what}: a user of another tenant naming the subject`)
      t.equal((await route(bearer(acmeToken), '?subject=u-bob')).status, 403, `${what}: another tenant's manage token`)
      t.equal((await route(viewOnly, '?subject=u-bob')).status, 403, `${what}: a client without the manage scope`)
      t.equal((await route(tenant)).status, 400, `${what}: a client token that names no subject`)
      t.equal((await route(tenant, '?subject=')).status, 400, `${what}: an empty subject`)
      t.equal((await route({})).status, 401, `${what}: no token`)
    }
    t.equal((await consents(bobDemo, '?limit=x')).status, 400, 'a bad limit')
    t.same((await consents(eveDemo)).json<Json[]>().map((c) => c.consentReference), [eves], 'eve sees her own')
  })

  t.test('erase revokes every consent of the subject, once and for all', async (t) => {
    const res = await erase(bobDemo)
    t.equal(res.status, 204)
    const after = (await consents(bobDemo)).json<Json[]>()
    t.same(after.map((c) => c.status), ['revoked', 'revoked'])
    const read = await bob.get('nodes/core/customer/bob')
    t.equal(read.status, 403)
    t.equal(read.json<Json>().type, 'consent_revoked', 'the data is shredded')
    const exported = await exportOf(bobDemo)
    t.notMatch(exported.text, /Bob Plaintext/)
    t.equal(exported.json<Json[]>().filter((e) => e.kind === 'node' || e.kind === 'relation').length, 0, 'nothing left to export')
    t.equal((await erase(bobDemo)).status, 204, 'idempotent')
    t.equal((await erase(tenant, '?subject=u-bob')).status, 204, 'the tenant may erase too')
    t.equal((await eve.get('nodes/core/customer/eve')).json<Json>().name, 'Eve Secret', "another subject's data stays")
    t.match((await consents(bobAcme, '', 'acme')).json<Json[]>(), [{ status: 'granted' }], "another tenant's consent of the same subject stays")
    t.equal((await bob.put('nodes/core/customer/bob', { name: 'Again' })).status, 403, 'nothing grants it again silently')
  })
})

t.test('every export and erasure writes an audit line naming the subject, never a consent reference', async (t) => {
  await server.stop()
  const audits = server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Json).filter((l) => typeof l.audit === 'string')
  const exports = audits.filter((a) => a.audit === 'subject.export')
  t.ok(exports.length >= 6, `an audit line per export (${exports.length})`)
  t.match(exports.find((a) => a.client === 'demo-enricher'), { tenant: 'demo', subject: 'u-bob' }, 'by a tenant: its client and the subject')
  t.ok(exports.some((a) => a.tenant === 'demo' && a.subject === 'u-bob' && a.client === undefined), "by bob himself: the user token's subject")
  const erasures = audits.filter((a) => a.audit === 'subject.erase')
  t.ok(erasures.length >= 3, 'an audit line per erasure')
  t.ok(erasures.every((a) => a.subject === 'u-bob' && a.tenant === 'demo'))
  t.notMatch(JSON.stringify([...exports, ...erasures]), /cr_/, 'no consent reference in them')
})
