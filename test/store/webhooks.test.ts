// Webhooks on a real shard: create answers the secret once and stores it
// sealed, list and get never show it, delete, the per-tenant limit, the
// delivery state (the cursor never moves back) and the delivery targets.
import t from 'tap'
import { randomBytes } from 'node:crypto'
import { appendEvent } from '../../workers/store/events'
import { MAX_WEBHOOKS_PER_TENANT, createWebhook, deleteWebhook, listWebhooks, saveWebhookState, webhookDb, webhookTargets } from '../../workers/store/webhooks'
import type { WebhookTarget } from '../../src/contract/messages'
import { bodyOf, outcome, tempShard, type TempShard } from '../helpers/temp-shard'

interface Created { id: string; url: string; secret: string }

async function create(s: TempShard, tenant: string, url = 'https://hooks.test/x'): Promise<Created> {
  return bodyOf(await s.write(() => createWebhook(s.store, s.webhookKey, tenant, url, s.clock.time))) as Created
}
const targets = (s: TempShard, tenant: string | undefined, key = s.webhookKey): WebhookTarget[] => bodyOf(webhookTargets(s.store, key, tenant)) as WebhookTarget[]

t.test('create answers id, url and secret; the secret is stored sealed; list and get leave it out', async (t) => {
  const s = tempShard(t)
  await s.write(() => appendEvent(s.store, 'demo', 'CREATE', 'x', {}, undefined, 1))
  const w = await create(s, 'demo')
  t.match(w.id, /^wh_[A-Za-z0-9_-]{16}$/)
  t.match(w.secret, /^[0-9a-f]{64}$/)
  t.equal(w.url, 'https://hooks.test/x')
  const stored = webhookDb(s.store).get(['demo', w.id])!
  t.notOk(Buffer.from(stored.secret).includes(w.secret), 'not on disk in the clear')
  const view = { id: w.id, url: w.url, created: s.clock.time, cursor: 1, failingSince: null, suspended: false, lastError: null }
  t.same(bodyOf(listWebhooks(s.store, 'demo', undefined)), [view], 'the cursor starts at the end of the log: only later events are delivered')
  t.same(bodyOf(listWebhooks(s.store, 'demo', w.id)), view)
  t.notOk(JSON.stringify(bodyOf(listWebhooks(s.store, 'demo', undefined))).includes(w.secret))
  t.equal(outcome(listWebhooks(s.store, 'demo', 'wh_nothing')), 'element_not_found')
  t.same(bodyOf(listWebhooks(s.store, 'other', undefined)), [], "another tenant's list is empty")
  t.equal(outcome(listWebhooks(s.store, 'other', w.id)), 'element_not_found', "and it cannot read this tenant's webhook")
  const second = await create(s, 'demo')
  t.not(second.id, w.id)
  t.not(second.secret, w.secret)
})

t.test('delete removes one webhook of its tenant; deleting what is not there is 404', async (t) => {
  const s = tempShard(t)
  const a = await create(s, 'demo')
  const b = await create(s, 'demo')
  t.equal(outcome(await s.write(() => deleteWebhook(s.store, 'other', a.id))), 'element_not_found', 'not through another tenant')
  t.equal(outcome(await s.write(() => deleteWebhook(s.store, 'demo', a.id))), 204)
  t.same((bodyOf(listWebhooks(s.store, 'demo', undefined)) as { id: string }[]).map((w) => w.id), [b.id])
  t.equal(outcome(await s.write(() => deleteWebhook(s.store, 'demo', a.id))), 'element_not_found')
})

t.test(`a tenant may register at most ${MAX_WEBHOOKS_PER_TENANT} webhooks`, async (t) => {
  const s = tempShard(t)
  const results = await s.write(() => Array.from({ length: MAX_WEBHOOKS_PER_TENANT + 1 }, (_, i) => createWebhook(s.store, s.webhookKey, 'demo', `https://h.test/${i}`, 1)))
  t.same(results.slice(0, -1).map(outcome), Array(MAX_WEBHOOKS_PER_TENANT).fill(201))
  t.match(results.at(-1), { kind: 'error', type: 'bad_request', message: /at most 100 webhooks/ })
  t.equal(outcome(await s.write(() => createWebhook(s.store, s.webhookKey, 'other', 'https://h.test/o', 1))), 201, 'the limit is per tenant')
  const first = (bodyOf(listWebhooks(s.store, 'demo', undefined)) as { id: string }[])[0]!
  await s.write(() => deleteWebhook(s.store, 'demo', first.id))
  t.equal(outcome(await s.write(() => createWebhook(s.store, s.webhookKey, 'demo', 'https://h.test/again', 1))), 201, 'room again after a delete')
})

t.test('delivery state is saved; the cursor never moves back', async (t) => {
  const s = tempShard(t)
  const w = await create(s, 'demo')
  const failing = { cursor: 7, failingSince: 1000, suspended: false, lastError: 'HTTP 500' }
  t.equal(outcome(await s.write(() => saveWebhookState(s.store, 'demo', w.id, failing))), 204)
  t.match(bodyOf(listWebhooks(s.store, 'demo', w.id)), failing)
  await s.write(() => saveWebhookState(s.store, 'demo', w.id, { cursor: 3, failingSince: 1000, suspended: true, lastError: 'HTTP 500' }))
  t.match(bodyOf(listWebhooks(s.store, 'demo', w.id)), { cursor: 7, suspended: true }, 'an older cursor does not win')
  await s.write(() => saveWebhookState(s.store, 'demo', w.id, { cursor: 9, failingSince: null, suspended: false, lastError: null }))
  t.match(bodyOf(listWebhooks(s.store, 'demo', w.id)), { cursor: 9, failingSince: null, suspended: false, lastError: null, url: w.url })
  t.equal(outcome(await s.write(() => saveWebhookState(s.store, 'demo', 'wh_gone', failing))), 'element_not_found')
  t.same(bodyOf(listWebhooks(s.store, 'demo', undefined)), [bodyOf(listWebhooks(s.store, 'demo', w.id))])
})

t.test("delivery targets open the secrets, one tenant's or every tenant's", async (t) => {
  const s = tempShard(t)
  const a = await create(s, 'a', 'https://a.test/')
  const b = await create(s, 'b', 'https://b.test/')
  t.same(targets(s, 'a'), [{ tenant: 'a', id: a.id, url: a.url, secret: a.secret, cursor: 0, failingSince: null, suspended: false, lastError: null }])
  t.same(targets(s, undefined).map((x) => [x.tenant, x.secret]).sort(), [['a', a.secret], ['b', b.secret]])
  t.same(targets(s, 'none'), [])
  await s.reopen()
  webhookDb(s.store)
  t.same(targets(s, 'b').map((x) => x.secret), [b.secret], 'they open after a restart')
})

t.test('a secret that does not open is not delivered; the others are', async (t) => {
  const s = tempShard(t)
  const a = await create(s, 'demo')
  const b = await create(s, 'demo')
  // b's sealed secret moved onto a: bound to b's identity, it does not open as a's.
  const db = webhookDb(s.store)
  await s.write(() => db.putSync(['demo', a.id], { ...db.get(['demo', a.id])!, secret: db.get(['demo', b.id])!.secret }))
  const errors: string[] = []
  const error = console.error
  console.error = (m: string) => { errors.push(m) }
  try {
    t.same(targets(s, 'demo').map((x) => x.id), [b.id])
    t.same(targets(s, 'demo', randomBytes(32)), [], 'nothing opens under another key')
  } finally {
    console.error = error
  }
  t.match(errors[0], new RegExp(`webhook ${a.id} of tenant demo does not open`))
})
