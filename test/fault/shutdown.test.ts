// SIGTERM with requests in flight: the server stops accepting, answers every
// request it had (writes and long-polls), then exits 0; no client loses its
// connection without an answer, and every acknowledged write is there after
// a restart.
import t from 'tap'
import { connect } from 'node:net'
import { Graph, createConsent } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'
import { sleep } from '../../bench/wait'

/** What a client saw: a status, or the code of the error that ended its request. */
type Outcome = { status: number } | { error: string; at: number }

function errorCode(err: unknown): string {
  const e = err as { code?: string; cause?: { code?: string } }
  return e.cause?.code ?? e.code ?? String(err)
}

// A refused connection is a request the server never accepted (it stopped listening): fine.
const NOT_ACCEPTED = new Set(['ECONNREFUSED'])

t.test('SIGTERM answers the requests in flight before closing', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir })
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token, await createConsent(server.url, 'demo', token, 'subject-1'))

  const outcomes: Outcome[] = []
  let signalled = 0
  const acked: number[] = []
  let seq = 0
  let stop = false
  const writer = async (): Promise<void> => {
    while (!stop) {
      const i = seq++
      try {
        const res = await g.put(`nodes/core/customer/s${i}`, { name: `N${i}`, i })
        outcomes.push({ status: res.status })
        if (res.status === 204) acked.push(i)
        if (res.status === 503) return
      } catch (err) {
        outcomes.push({ error: errorCode(err), at: Date.now() - signalled })
        return
      }
    }
  }
  // Long-polls are surely in flight at the signal: they wait for events that never come.
  const polls = Array.from({ length: 8 }, async (): Promise<Outcome> => {
    try {
      const res = await g.get('events?after=999999999&wait=30')
      return { status: res.status }
    } catch (err) {
      return { error: errorCode(err), at: Date.now() - signalled }
    }
  })
  const writers = Array.from({ length: 32 }, writer)
  await sleep(1500)
  signalled = Date.now()
  await server.stop()
  stop = true
  await Promise.all(writers)
  const pollOutcomes = await Promise.all(polls)

  t.equal(server.proc.exitCode, 0, 'the server exits 0')
  t.ok(Date.now() - signalled < 15_000, 'the drain is bounded')
  t.match(server.output(), /SIGTERM: shutting down, answering \d+ requests in flight/)
  t.same(pollOutcomes, pollOutcomes.map(() => ({ status: 200 })), 'every waiting long-poll is answered (an empty page)')
  const cut = outcomes.filter((o) => 'error' in o && !NOT_ACCEPTED.has(o.error))
  t.same(cut, [], 'no request in flight lost its connection without an answer')
  t.ok(acked.length > 20, `${acked.length} writes acknowledged`)

  const again = await startServer({ dataDir: dir })
  t.teardown(() => again.stop())
  const g2 = new Graph(again.url, 'demo', await getToken(again.url))
  let missing = 0
  for (const i of acked) if ((await g2.get(`nodes/core/customer/s${i}`)).status !== 200) missing++
  t.equal(missing, 0, 'every acknowledged write is there after the restart')
})

/** A PUT whose body never completes: one exchange in flight for as long as the test wants. */
function stuckRequest(t: tap.Test, url: string, token: string): void {
  const { host, port, pathname } = new URL(url)
  const socket = connect(Number(port), host.replace(/:\d+$/, ''))
  socket.on('error', () => {})
  t.teardown(() => { socket.destroy() })
  socket.write(`PUT ${pathname} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`)
}

t.test('the drain is bounded by SHUTDOWN_TIMEOUT', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir, args: ['--shutdown-timeout', '1s'] })
  const token = await getToken(server.url)
  stuckRequest(t, new Graph(server.url, 'demo', token).url('nodes/core/customer/x'), token)
  await sleep(500)
  await server.stop()
  t.equal(server.proc.exitCode, 0)
  t.match(server.output(), /shutdown: 1 requests still unanswered after 1000 ms; closing their connections/)
})

t.test('a second signal during the drain exits at once', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir, args: ['--shutdown-timeout', '60s'] })
  const token = await getToken(server.url)
  const g = new Graph(server.url, 'demo', token)
  stuckRequest(t, g.url('nodes/core/customer/x'), token)
  await sleep(500)
  const exited = new Promise<number | null>((r) => server.proc.once('exit', (code) => r(code)))
  server.proc.kill('SIGTERM')
  await sleep(1000)
  t.equal(server.proc.exitCode, null, 'still draining')
  server.proc.kill('SIGTERM')
  t.equal(await exited, 1)
  t.match(server.output(), /SIGTERM again: exiting without waiting for the drain/)
})
