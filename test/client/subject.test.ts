// A data subject's routes through the client, with a manage-scope token
// naming the subject: the consent list paged as an async iterator, the
// export streamed, the erasure.
import t from 'tap'
import { ProfileGraphClient, isProfileGraphError } from '@profile-graph/client'
import { serverForFile } from '../helpers/server'

const fixture = serverForFile(t)

t.test("a subject's consents, export and erasure", async (t) => {
  const graph = new ProfileGraphClient({ baseUrl: fixture.server.url, tenant: 'demo', credentials: { clientId: 'demo-enricher', clientSecret: 'demo-secret' } })
  const refs: string[] = []
  for (let i = 0; i < 5; i++) refs.push(await graph.createConsent({ subject: 'subject-a' }))
  await graph.createConsent({ subject: 'subject-b' })
  await graph.putNode({ ns: 'core', type: 'customer', id: 'a-1' }, { name: 'Ann' }, refs[0]!)

  const listed: string[] = []
  for await (const c of graph.subjectConsents({ subject: 'subject-a', pageSize: 2 })) listed.push(c.consentReference)
  t.same(listed, [...refs].sort(), "every consent of the subject, over three pages, none of another's")

  const exported = []
  for await (const e of graph.exportSubject({ subject: 'subject-a' })) exported.push(e)
  t.match(exported[0], { kind: 'subject', subject: 'subject-a', tenant: 'demo' }, 'the subject first')
  t.equal(exported.filter((e) => e.kind === 'consent').length, 5, 'its consents')
  t.match(exported.find((e) => e.kind === 'node'), { kind: 'node', node: { id: 'a-1' }, properties: { name: 'Ann' } }, 'its data, decrypted')

  await graph.eraseSubject({ subject: 'subject-a' })
  await graph.eraseSubject({ subject: 'subject-a' })
  for await (const c of graph.subjectConsents({ subject: 'subject-a' })) t.equal(c.status, 'revoked', `${c.consentReference} revoked`)
  const missing = await graph.eraseSubject().catch((e: unknown) => e)
  t.ok(isProfileGraphError(missing, 'bad_request'), 'a client token must name the subject')
})
