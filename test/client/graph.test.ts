// The client package against the real server: client-credentials tokens,
// every graph operation with its consent reference, the service's errors as
// ProfileGraphError values, and list and neighbours reads streamed (a loop
// left early cancels the download).
import t from 'tap'
import { ClientCredentialsTokens, ProfileGraphClient, isLocked, isProfileGraphError, type NodeRef, type RelationRef } from '@profile-graph/client'
import { serverForFile } from '../helpers/server'
import { countingFetch } from '../helpers/counting-fetch'

const fixture = serverForFile(t)
const credentials = { clientId: 'demo-enricher', clientSecret: 'demo-secret' }
const client = (fetchImpl?: typeof fetch): ProfileGraphClient =>
  new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', credentials, ...(fetchImpl === undefined ? {} : { fetch: fetchImpl }) })

const customer = (id: string): NodeRef => ({ ns: 'core', type: 'customer', id })
const product = (id: string): NodeRef => ({ ns: 'core', type: 'product', id })
const viewed = (from: string, to: string): RelationRef => ({ from: customer(from), to: product(to), rel: { ns: 'core', type: 'viewed', id: 'v1' } })

t.test('nodes, properties, relations and counters, each write with its consent reference', async (t) => {
  const graph = client()
  const consent = await graph.createConsent({ subject: 'client-subject-1' })
  t.match(consent, /^cr_/, 'the consent reference')
  t.same((await graph.getConsent(consent)).status, 'granted')

  const john = customer('john/1')
  await graph.putNode(john, { name: 'John Smith', age: 42 }, consent)
  const node = await graph.getNode(john)
  if (isLocked(node)) throw new Error('the node is locked')
  t.equal(node['consent-reference'], consent, 'owned by the consent')
  t.equal(node['name'], 'John Smith', 'an id with a slash is one segment')
  await graph.putProperty(john, 'email', 'john@example.com', consent)
  t.equal(await graph.getProperty(john, 'email'), 'john@example.com')

  await graph.putRelation(viewed('john/1', 'tea'), { lastSeen: 7 }, consent)
  t.equal((await graph.getRelation(viewed('john/1', 'tea')) as Record<string, unknown>)['lastSeen'], 7)
  t.equal((await graph.incrementCounter(viewed('john/1', 'tea'), 'views', consent) as Record<string, unknown>)['views'], 1)
  t.equal((await graph.incrementCounter(viewed('john/1', 'tea'), 'views', consent) as Record<string, unknown>)['views'], 2)

  await graph.setRevokedProperties(consent, ['email'])
  t.same((await graph.getConsent(consent)).revokedProperties, ['email'])
  await graph.setRevokedProperties(consent, [])

  await graph.deleteRelation(viewed('john/1', 'tea'))
  await graph.deleteNode(john)
  const gone = await graph.getNode(john).catch((e: unknown) => e)
  t.ok(isProfileGraphError(gone, 'element_not_found'), 'a missing node is element_not_found')
  t.equal((gone as { status: number }).status, 404)

  t.ok((await graph.getMetamodel()) !== null, 'the metamodel')
})

t.test("errors are values carrying the service's type, status and message", async (t) => {
  const graph = client()
  const refused = await graph.putNode(customer('e1'), { name: 'X' }, 'cr_not_a_consent').catch((e: unknown) => e)
  t.ok(isProfileGraphError(refused, 'forbidden'), 'an unknown consent reference is forbidden')
  t.equal((refused as { status: number }).status, 403)
  t.match((refused as Error).message, /consent/)
  const invalid = await graph.putNode(customer('e1'), { id: 'reserved' }, fixture.consent).catch((e: unknown) => e)
  t.ok(isProfileGraphError(invalid, 'validation_violation'), 'a reserved name')
  t.match((invalid as { moreInfo: string }).moreInfo, /\/errors#validation_violation$/)

  const wrong = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', credentials: { clientId: 'demo-enricher', clientSecret: 'wrong' } })
  const badCredentials = await wrong.getMetamodel().catch((e: unknown) => e)
  t.ok(isProfileGraphError(badCredentials, 'insufficient_credentials'), 'bad client credentials')
  t.equal((badCredentials as { oauthError: string }).oauthError, 'invalid_client', 'with the OAuth error code')

  const otherTenant = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'acme', credentials })
  t.ok(isProfileGraphError(await otherTenant.getMetamodel().catch((e: unknown) => e), 'forbidden'), "another tenant's path")
})

t.test('client-credentials tokens: fetched once, shared, and renewed after the service refuses one', async (t) => {
  const counting = countingFetch()
  const graph = client(counting.fetch)
  const tokens = await Promise.all([graph.token(), graph.token(), graph.token()])
  t.equal(new Set(tokens).size, 1, 'concurrent callers share one token')
  await graph.getMetamodel()
  t.equal(counting.requests('/oauth2/v1/token'), 1, 'one token request')

  // the token revoked behind the client's back: the next call is refused once, then sent with a new token
  const revoke = await fetch(`${fixture.server.url}/oauth2/v1/revoke`, {
    method: 'POST', body: new URLSearchParams({ token: tokens[0]! }),
    headers: { authorization: `Basic ${btoa('demo-enricher:demo-secret')}`, 'content-type': 'application/x-www-form-urlencoded' },
  })
  t.equal(revoke.status, 200)
  await graph.getMetamodel()
  t.equal(counting.requests('/oauth2/v1/token'), 2, 'a new token after the 401')
  t.not(await graph.token(), tokens[0], 'and kept')
})

t.test('a token is renewed before it expires: at its lifetime less the margin, by the clock of when it was asked for', async (t) => {
  const counting = countingFetch()
  let now = 1_000_000
  const tokens = new ClientCredentialsTokens(`${fixture.server.url}/oauth2/v1/token`, { ...credentials, renewBeforeSeconds: 60 }, counting.fetch, () => now)
  const first = await tokens.token()
  const answer = await fetch(`${fixture.server.url}/oauth2/v1/token`, {
    method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials' }),
    headers: { authorization: `Basic ${btoa('demo-enricher:demo-secret')}`, 'content-type': 'application/x-www-form-urlencoded' },
  })
  const seconds = ((await answer.json()) as { expires_in: number }).expires_in
  t.ok(seconds > 120, `the service's tokens live ${seconds} s`)
  now += (seconds - 61) * 1000
  t.equal(await tokens.token(), first, 'kept until the margin')
  t.equal(counting.requests('/oauth2/v1/token'), 1)
  now += 2000
  const second = await tokens.token()
  t.not(second, first, 'renewed within the last minute of its lifetime, before it expired')
  t.equal(counting.requests('/oauth2/v1/token'), 2)
  const client = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', token: () => tokens.token() })
  t.ok(await client.getMetamodel(), 'the renewed token is accepted')
})

t.test('list and neighbours reads stream; leaving the loop cancels the download', async (t) => {
  const graph = client()
  const { consent } = fixture
  const bulk = graph.bulk({ answers: 'errors' })
  const writer = bulk.writable.getWriter()
  const written = (async () => {
    for (let i = 0; i < 1500; i++) {
      await writer.write({ method: 'PUT', path: `nodes/list/person/p${i}`, headers: { 'consent-reference': consent }, body: { name: `Person ${i}`, age: i % 90 } })
      await writer.write({ method: 'PUT', path: `relations/core/customer/hub/core/product/n${i}/core/viewed/v1`, headers: { 'consent-reference': consent }, body: { lastSeen: i } })
    }
    await writer.close()
  })()
  const summary = await bulk.summary()
  await written
  t.same(summary, { done: 3000, failed: 0 })

  t.equal(await graph.countNodes({ ns: 'list', type: 'person' }), 1500, 'the count header')
  let listed = 0
  for await (const node of graph.listNodes({ ns: 'list', type: 'person' })) if ('id' in node) listed++
  t.equal(listed, 1500, 'every node of the type, one value each')
  const found = []
  for await (const node of graph.listNodes({ ns: 'list', type: 'person' }, { q: 'name:"Person 7"', limit: 10 })) found.push(node)
  t.equal(found.length, 1, 'a search')

  let chunks = 0
  for await (const chunk of graph.neighbours(customer('hub'))) {
    if (chunks === 0) t.equal(chunk.id, 'hub', 'the source node first')
    chunks++
  }
  t.equal(chunks, 1501, 'the source and every neighbour')

  for (const [what, read] of [
    ['list', (g: ProfileGraphClient) => g.listNodes({ ns: 'list', type: 'person' })],
    ['neighbours', (g: ProfileGraphClient) => g.neighbours(customer('hub'))],
  ] as const) {
    const whole = countingFetch()
    for await (const _ of read(client(whole.fetch))) { /* every value */ }
    const counting = countingFetch()
    let taken = 0
    for await (const _ of read(client(counting.fetch))) if (++taken === 5) break
    await counting.settled()
    t.equal(counting.cancelled(), 1, `${what}: the body was cancelled`)
    t.ok(counting.bodyBytes() < whole.bodyBytes() / 3, `${what}: the download stopped early (${counting.bodyBytes()} of ${whole.bodyBytes()} bytes read)`)
  }
})
