// A bulk request cut short by kill -9 or by a shutdown (SIGTERM): after a
// restart on the same data directory, every line whose answer was received
// is stored, and each line is whole (a node exists exactly when its CREATE
// event does). A shutdown ends the request: the server exits, and an answer
// read to its end has one line per line applied, no more, no fewer.
import t, { type Test } from 'tap'
import { Graph, createConsent } from '../helpers/client'
import { bulkUntilCut } from '../helpers/bulk'
import { getToken, removeDir, startServer, tempDir, type Server } from '../helpers/server'

type Body = Record<string, unknown>

/** Restarts on `dir` and checks that the first `answered` lines are stored and that nodes and their CREATE events match; how many of the lines' nodes are stored. */
async function checkAfterRestart(t: Test, dir: string, answered: number): Promise<number> {
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
  return [...stored].filter((id) => id.startsWith('k')).length
}

async function firstServer(t: Test): Promise<{ dir: string; server: Server; token: string; consent: string }> {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir })
  const token = await getToken(server.url)
  return { dir, server, token, consent: await createConsent(server.url, 'demo', token, 'subject-1') }
}

t.test('every answered bulk line survives SIGKILL', async (t) => {
  const { dir, server, token, consent } = await firstServer(t)
  const cut = await bulkUntilCut(server.url, 'demo', token, consent, 5000, () => server.kill())
  t.ok(cut.answered >= 5000, `${cut.answered} lines answered before the kill`)
  await checkAfterRestart(t, dir, cut.answered)
})

t.test('a shutdown ends a bulk request: the lines in flight are answered, the server exits', async (t) => {
  const { dir, server, token, consent } = await firstServer(t)
  const cut = await bulkUntilCut(server.url, 'demo', token, consent, 3000, () => server.stop())
  t.equal(server.proc.exitCode, 0, 'the server exited on its own')
  t.ok(cut.answered >= 3000, `${cut.answered} lines answered before the shutdown${cut.ended ? '' : ' (the connection closed before the end of the answer was read)'}`)
  const stored = await checkAfterRestart(t, dir, cut.answered)
  // Every line taken is answered before the answer ends: read to its end, the answers count exactly the lines applied.
  if (cut.ended) t.equal(stored, cut.answered, 'the answer ended: no line applied without its answer line')
})
