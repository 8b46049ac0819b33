// The shard actors tell the front thread's time. With the test clock
// (CLOCK_OFFSET_FILE) a day ahead, what the actors stamp is a day ahead too:
// a node's `created` and its CREATE event's `time`.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Graph, createConsent } from '../helpers/client'
import { readLog, type Envelope } from '../helpers/event-log'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'

const DAY = 86_400_000
const MARGIN = 60_000

t.test('timestamps written by the shard actors follow the injected clock', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const clockFile = join(dir, 'clock-offset')
  writeFileSync(clockFile, String(DAY))
  const server = await startServer({ dataDir: dir, env: { CLOCK_OFFSET_FILE: clockFile } })
  t.teardown(() => server.stop())
  const token = await getToken(server.url)
  const ref = await createConsent(server.url, 'demo', token, 'clock')
  const g = new Graph(server.url, 'demo', token, ref)
  const after = await readLog(g).then((l) => l.end)

  t.equal((await g.put('nodes/core/customer/k1', { name: 'K' })).status, 204)
  const ahead = (time: unknown): boolean => typeof time === 'number' && Math.abs(time - (Date.now() + DAY)) < MARGIN

  const node = (await g.get('nodes/core/customer/k1')).json<Record<string, unknown>>()
  t.ok(ahead(node.created), `created ${String(node.created)} is a day ahead of the system clock`)

  const events = (await readLog(g, after)).texts.map((text) => JSON.parse(text) as Envelope)
  const create = events.find((e) => e.operation === 'CREATE' && e.payload.id === 'k1')
  t.ok(create !== undefined && ahead(create.time), 'the CREATE event is stamped a day ahead')

})
