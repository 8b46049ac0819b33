// A data subject's own routes through a host that does not own the tenant's
// shard: the consent list, the export (a stream) and the erasure are
// forwarded to the owner like any other call, and the erasure shreds on
// every host (docs/manual/graph-api.md, "A data subject's own consents and
// data").
import t from 'tap'
import { call, createConsent, Graph } from '../helpers/client'
import { postForm } from '../helpers/oauth'
import { graphsThroughEveryHost } from './helpers/graphs'
import { clusterFile, ownerAndOther } from './helpers/leases'

const { skip, cluster, leases: clusterLeases } = clusterFile(t)

/** The fixture's end customer (sub "alice") signs in through `url` by the password grant. */
async function aliceToken(url: string): Promise<string> {
  const res = await postForm(`${url}/oauth2/v1/token`, { grant_type: 'password', username: 'alice', password: 'alice-password', scope: 'platform.tenant=demo' })
  if (res.status !== 200) throw new Error(`no token for alice through ${url}: ${res.status} ${res.text}`)
  return res.json<{ access_token: string }>().access_token
}

t.test("a subject lists, exports and erases their data through a host that does not own the tenant's shard", { skip }, async (t) => {
  const leases = await clusterLeases()
  const graphs = await graphsThroughEveryHost(cluster)
  const { owner, other, viaOwner } = await ownerAndOther(cluster, leases, graphs)
  // Two of alice's consents, data under both, written through the owner.
  const refs = [await createConsent(owner.url, 'demo', viaOwner.token, 'alice'), await createConsent(owner.url, 'demo', viaOwner.token, 'alice')]
  for (const [n, ref] of refs.entries()) {
    const g = new Graph(owner.url, 'demo', viaOwner.token, ref)
    t.equal((await g.put(`nodes/core/customer/alice-${n}`, { name: `Alice ${n}` })).status, 204, `node of consent ${n} written`)
  }
  const token = await aliceToken(other.url)
  const auth = { authorization: `Bearer ${token}` }
  const base = `${other.url}/graph/v1/demo`

  const listed = await call('GET', `${base}/consents`, auth)
  t.equal(listed.status, 200, 'the list through the other host')
  const mine = listed.json<{ consentReference: string; status: string }[]>()
  t.same(mine.map((c) => c.consentReference).sort(), [...refs].sort(), 'exactly her two consents')

  const exported = await call('GET', `${base}/subject/export`, { ...auth, accept: 'application/x-ndjson' })
  t.equal(exported.status, 200, 'the export through the other host')
  t.match(exported.text, /Alice 0/, 'the first consent\'s data, decrypted')
  t.match(exported.text, /Alice 1/, 'the second consent\'s data, decrypted')

  const erased = await call('DELETE', `${base}/subject`, auth)
  t.equal(erased.status, 204, 'the erasure through the other host')
  t.equal((await call('DELETE', `${base}/subject`, auth)).status, 204, 'erasing again changes nothing')

  // Every host now sees both consents revoked and the data gone.
  for (const [i, host] of cluster.hosts.entries()) {
    const after = await call('GET', `${host.url}/graph/v1/demo/consents`, auth)
    t.equal(after.status, 200)
    t.ok(after.json<{ status: string }[]>().every((c) => c.status === 'revoked'), `${host.nodeId}: every consent revoked`)
    const read = await graphs[i]!.get('nodes/core/customer/alice-0')
    t.not(read.status, 200, `${host.nodeId}: the node's data no longer opens (${read.status})`)
    const again = await call('GET', `${host.url}/graph/v1/demo/subject/export`, { ...auth, accept: 'application/x-ndjson' })
    t.equal(again.status, 200)
    t.notMatch(again.text, /Alice [01]/, `${host.nodeId}: the export holds none of the erased data`)
  }
})
