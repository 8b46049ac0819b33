// kill -9 during a write load: after a restart on the same data directory,
// every write that was acknowledged (204/200) is there.
import t from 'tap'
import { Graph, createConsent } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'
import { until } from '../../bench/wait'

type Body = Record<string, unknown>

t.test('no acknowledged write is lost to SIGKILL', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const first = await startServer({ dataDir: dir })
  const firstToken = await getToken(first.url)
  const g = new Graph(first.url, 'demo', firstToken, await createConsent(first.url, 'demo', firstToken, 'subject-1'))

  const ackedNodes: number[] = []
  let ackedCount = 0
  let stop = false
  let seq = 0
  const writer = async (): Promise<void> => {
    while (!stop) {
      const i = seq++
      try {
        const res = await g.put(`nodes/core/customer/k${i}`, { name: `N${i}`, i })
        if (res.status === 204) ackedNodes.push(i)
        const c = await g.post('counters/core/customer/k0/core/product/p/core/viewed/r/views')
        if (c.status === 200) ackedCount = Math.max(ackedCount, c.json<Body>().views as number)
      } catch {
        return // the connection died with the server
      }
    }
  }
  const writers = Array.from({ length: 16 }, writer)
  // Killed mid-stream once enough writes are acknowledged (a count, not a fixed time: a loaded machine is slower).
  await until('60 acknowledged node writes', () => ackedNodes.length > 60, 120_000)
  await first.kill()
  stop = true
  await Promise.all(writers)
  t.ok(ackedNodes.length > 50, `${ackedNodes.length} node writes acknowledged before the kill`)

  const second = await startServer({ dataDir: dir })
  t.teardown(() => second.stop())
  const g2 = new Graph(second.url, 'demo', await getToken(second.url))
  let missing = 0
  for (const i of ackedNodes) {
    const res = await g2.get(`nodes/core/customer/k${i}`)
    if (res.status !== 200 || res.json<Body>().i !== i) missing++
  }
  t.equal(missing, 0, 'every acknowledged node is there with its properties')
  const rel = await g2.get('relations/core/customer/k0/core/product/p/core/viewed/r')
  t.ok((rel.json<Body>().views as number) >= ackedCount, `counter ${rel.json<Body>().views} >= last acknowledged ${ackedCount}`)
  const count = Number((await g2.head('nodes/core/customer')).headers['x-total-count'])
  t.ok(count >= ackedNodes.length, 'the type count agrees')

  // Change and event share one transaction: after the crash, the customer
  // nodes that exist are exactly those with a CREATE event.
  const stored = new Set((await g2.get('nodes/core/customer')).json<Body[]>().map((n) => n.id as string))
  const created = new Set<string>()
  let after = 0
  for (;;) {
    const page = (await g2.get(`events?after=${after}&limit=1000`)).json<{ events: { operation: string; schema: string; payload: Body }[]; next: number }>()
    if (page.events.length === 0) break
    after = page.next
    for (const e of page.events) if (e.operation === 'CREATE' && e.schema.endsWith('/nodes/core/customer')) created.add(e.payload.id as string)
  }
  t.equal(stored.size, count)
  t.same([...created].filter((id) => !stored.has(id)), [], 'no event without its change')
  t.same([...stored].filter((id) => !created.has(id)), [], 'no change without its event')
})
