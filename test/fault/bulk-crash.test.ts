// kill -9 during a bulk request: after a restart on the same data
// directory, every line whose answer was received is stored, and each line
// is whole (a node exists exactly when its CREATE event does).
import t from 'tap'
import { Readable } from 'node:stream'
import { request } from 'undici'
import { Graph, createConsent } from '../helpers/client'
import { lineOf } from '../helpers/bulk'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'

type Body = Record<string, unknown>

t.test('every answered bulk line survives SIGKILL', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const first = await startServer({ dataDir: dir })
  const token = await getToken(first.url)
  const consent = await createConsent(first.url, 'demo', token, 'subject-1')

  let sent = 0
  // Lines made as the server takes them, without end: the kill ends the request.
  async function* lines(): AsyncGenerator<string> {
    for (;;) {
      const i = sent++
      yield lineOf({ method: 'PUT', path: `nodes/core/customer/k${i}`, headers: { 'consent-reference': consent }, body: { name: `N${i}`, age: i } })
      if (i % 500 === 0) await new Promise((r) => setImmediate(r))
    }
  }
  const res = await request(`${first.url}/graph/v1/demo/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body: Readable.from(lines()),
  })
  t.equal(res.statusCode, 200)
  let answered = 0
  let rest = ''
  let killed: Promise<void> | undefined
  try {
    for await (const chunk of res.body) {
      rest += (chunk as Buffer).toString()
      const parts = rest.split('\n')
      rest = parts.pop()!
      for (const p of parts) {
        if ((JSON.parse(p) as Body).status !== 204) throw new Error(`line ${answered + 1} answered ${p}`)
        answered++
      }
      if (answered >= 5000 && killed === undefined) killed = first.kill()
    }
  } catch (err) {
    if (killed === undefined) throw err
  }
  await killed
  t.ok(answered >= 5000, `${answered} lines answered of ${sent} sent before the kill`)

  const second = await startServer({ dataDir: dir })
  t.teardown(() => second.stop())
  const g = new Graph(second.url, 'demo', await getToken(second.url))
  let missing = 0
  for (let i = 0; i < answered; i++) {
    const node = await g.get(`nodes/core/customer/k${i}`)
    if (node.status !== 200 || node.json<Body>().age !== i) missing++
  }
  t.equal(missing, 0, 'every answered line is stored with its properties')

  const stored = new Set((await g.get('nodes/core/customer?limit=999999')).json<Body[]>().map((n) => n.id as string))
  const created = new Set<string>()
  let after = 0
  for (;;) {
    const page = (await g.get(`events?after=${after}&limit=1000`)).json<{ events: { operation: string; payload: Body }[]; next: number }>()
    if (page.events.length === 0) break
    after = page.next
    for (const e of page.events) if (e.operation === 'CREATE') created.add(e.payload.id as string)
  }
  t.ok(stored.size >= answered, `${stored.size} nodes stored`)
  t.same([...stored].filter((id) => !created.has(id)), [], 'no line without its event')
  t.same([...created].filter((id) => id.startsWith('k') && !stored.has(id)), [], 'no event without its line')
})
