// The end customer's side of consent (docs/design/contracts.md, Consent): with a user token
// whose `sub` is the consent's subject, the customer reads, revokes, grants
// again and sets revoked properties of their own consent, and of no other.
import t from 'tap'
import { call } from '../helpers/client'
import { clientToken, oauthServerForFile, tokenOk } from '../helpers/oauth'

const env = oauthServerForFile(t)
type Json = Record<string, unknown>

t.test('a user token acts on its own consent only', async (t) => {
  const graph = `${env.server.url}/graph/v1/demo`
  const tenant = { authorization: `Bearer ${await clientToken(env.issuer, 'demo-enricher', 'demo-secret')}` }
  const create = async (subject: string): Promise<string> => {
    const res = await call('POST', `${graph}/consents`, { ...tenant, 'content-type': 'application/json' }, JSON.stringify({ subject }))
    return res.json<Json>().consentReference as string
  }
  const mine = await create('u-bob')
  const theirs = await create('someone-else')
  // bob is a graph-reader in demo: no manage scope, so he acts as the end customer.
  const bobToken = (await tokenOk(env.issuer, { grant_type: 'password', username: 'bob', password: 'bob-password', scope: 'platform.tenant=demo' })).access_token
  const bob = { authorization: `Bearer ${bobToken}` }

  t.equal((await call('GET', `${graph}/consents/${mine}`, bob)).json<Json>().subject, 'u-bob')
  t.equal((await call('PUT', `${graph}/consents/${mine}/revokedProperties`, { ...bob, 'content-type': 'application/json' }, '["email"]')).status, 204)
  t.same((await call('GET', `${graph}/consents/${mine}`, tenant)).json<Json>().revokedProperties, ['email'])
  t.equal((await call('DELETE', `${graph}/consents/${mine}`, bob)).status, 204, 'the customer revokes')
  t.equal((await call('GET', `${graph}/consents/${mine}`, tenant)).json<Json>().status, 'revoked')
  t.equal((await call('POST', `${graph}/consents/${mine}/grant`, bob)).status, 204, 'and grants again')
  t.equal((await call('GET', `${graph}/consents/${mine}`, tenant)).json<Json>().status, 'granted')

  for (const [what, res] of [
    ['read', await call('GET', `${graph}/consents/${theirs}`, bob)],
    ['revoke', await call('DELETE', `${graph}/consents/${theirs}`, bob)],
    ['grant', await call('POST', `${graph}/consents/${theirs}/grant`, bob)],
    ['revokedProperties', await call('PUT', `${graph}/consents/${theirs}/revokedProperties`, { ...bob, 'content-type': 'application/json' }, '[]')],
  ] as const) {
    t.equal(res.status, 403, `another subject's consent: ${what}`)
    t.equal(res.json<Json>().type, 'forbidden')
  }
  t.equal((await call('GET', `${graph}/consents/${theirs}`, tenant)).json<Json>().status, 'granted', 'unchanged')
  const created = await call('POST', `${graph}/consents`, { ...bob, 'content-type': 'application/json' }, '{"subject":"u-bob"}')
  t.equal(created.status, 403, 'only the tenant creates consents')
  const acme = await call('GET', `${env.server.url}/graph/v1/acme/consents/${mine}`, bob)
  t.equal(acme.status, 403, "a user token of demo cannot reach acme's consents")
})
