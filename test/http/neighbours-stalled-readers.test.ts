// Readers who stop reading a large neighbours answer hold a bounded amount
// of server memory: each stream at most its window of slices (the actor
// renders no more until the socket drains) and no copy of the answer so far,
// and all of them together at most --max-stream-buffer-mb, past which a new
// streamed read is refused with 503 and Retry-After until they go away.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { request } from 'undici'
import { pool } from '../helpers/client'
import { serverForFile } from '../helpers/server'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

// Each stalled reader's kernel buffers take ~3.3 MB of its answer on loopback (not the server's memory); the
// answer is larger, so each one stalls a stream, and over the 4 MiB a neighbourhood is kept whole on the front
// thread, so each stream is rendered by the actor through its window.
const NEIGHBOURS = 2200
const READERS = 200
const LIMIT_MB = 2
const fixture = serverForFile(t, { args: ['--max-stream-buffer-mb', String(LIMIT_MB)] })

function rssAnonBytes(pid: number): number {
  const m = /RssAnon:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m === null ? 0 : Number(m[1]) * 1024
}

const MB = 1024 * 1024

t.test(`${READERS} readers who stop reading hold bounded memory; past the limit new reads get 503`, async (t) => {
  const { server, graph: g } = fixture
  const padding = 'x'.repeat(1500)
  await pool(NEIGHBOURS, 32, async (i) => {
    const res = await g.put(`relations/core/customer/hub/core/product/n${i}/core/viewed/r`, { views: i, padding })
    if (res.status !== 204) throw new Error(`PUT ${i}: ${res.status}`)
  })
  const url = g.url('neighbours/core/customer/hub')
  const headers = { authorization: `Bearer ${g.token}` }
  /** A whole read: its status, Retry-After and size. */
  const read = async (): Promise<{ status: number; retryAfter: unknown; bytes: number; text: string }> => {
    const res = await request(url, { headers })
    let bytes = 0
    const head: Buffer[] = []
    for await (const piece of res.body) {
      bytes += (piece as Buffer).length
      if (res.statusCode !== 200) head.push(piece as Buffer)
    }
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], bytes, text: Buffer.concat(head).toString() }
  }
  // Concurrent whole reads first: every thread's heap grows to what such reads take and the element caches
  // fill, so the growth measured next is what the stalled readers hold.
  const warm = await Promise.all(Array.from({ length: 16 }, read))
  const size = warm[0]!.bytes
  t.ok(warm.every((w) => w.status === 200 && w.bytes === size), `warm-up reads whole (${(size / MB).toFixed(2)} MB each)`)
  t.ok(size > 4 * MB, 'larger than a neighbourhood the front thread keeps whole')

  const pid = server.proc.pid!
  const baseline = rssAnonBytes(pid)
  let peak = baseline
  const sampler = setInterval(() => { peak = Math.max(peak, rssAnonBytes(pid)) }, 25)
  t.teardown(() => clearInterval(sampler))

  // Raw sockets that send the request, take the first bytes of the answer and then never read again.
  const { hostname, port } = new URL(server.url)
  const path = new URL(url).pathname
  const readers: Socket[] = []
  const firstBytes = await Promise.all(Array.from({ length: READERS }, () => new Promise<string>((resolve) => {
    const s = connect(Number(port), hostname, () => s.write(`GET ${path} HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${g.token}\r\n\r\n`))
    readers.push(s)
    s.on('error', () => resolve('error'))
    s.once('data', (d: Buffer) => {
      s.pause()
      resolve(d.subarray(0, 12).toString('latin1'))
    })
  })))
  const started = firstBytes.filter((f) => f === 'HTTP/1.1 200').length
  t.ok(started > 0, `${started} of ${READERS} stalled readers got their answer started (the rest: 503)`)

  // The stalled streams now hold more than the limit: a new read is refused, with Retry-After.
  let refused: Awaited<ReturnType<typeof read>> | undefined
  const deadline = Date.now() + 30_000
  while (refused === undefined && Date.now() < deadline) {
    const r = await read()
    if (r.status === 503) refused = r
  }
  clearInterval(sampler)
  const growth = peak - baseline
  t.comment(`${READERS} stalled readers of a ${(size / MB).toFixed(2)} MB answer: server RssAnon ${(baseline / MB).toFixed(1)} -> peak ${(peak / MB).toFixed(1)} MB (+${(growth / MB).toFixed(1)} MB)`)
  t.ok(refused !== undefined, 'past the limit a new neighbours read gets 503')
  t.equal(refused?.status, 503)
  t.match(String(refused?.retryAfter), /^\d+$/, 'with Retry-After')
  t.match(JSON.parse(refused?.text ?? '{}'), { status: 503, type: 'service_unavailable', message: /MAX_STREAM_BUFFER_MB/ })
  // Each stalled stream holds its window (two ~64 KB slices) at most, all of them the limit; the bound leaves
  // room for garbage the collectors have not yet returned.
  t.ok(growth < 64 * MB + 32 * MB, `server private memory grew ${(growth / MB).toFixed(1)} MB with ${READERS} stalled readers`)

  // The readers go away: their streams are released, and reads work again.
  for (const s of readers) s.destroy()
  let again: Awaited<ReturnType<typeof read>> | undefined
  const end = Date.now() + 30_000
  while (again?.status !== 200 && Date.now() < end) again = await read()
  t.equal(again?.status, 200, 'once the readers are gone a neighbours read is answered')
  t.equal(again?.bytes, size, 'whole')
})

t.test('a neighbourhood kept whole is written as the socket takes it, whole, with its length', async (t) => {
  const { graph: g } = fixture
  const padding = 'z'.repeat(1500)
  await pool(150, 16, async (i) => {
    const res = await g.put(`relations/core/customer/kept-hub/core/product/k${i}/core/viewed/r`, { views: i, padding })
    if (res.status !== 204) throw new Error(`PUT ${i}: ${res.status}`)
  })
  const bodies: { text: string; length: unknown }[] = []
  // The second read is kept by the front thread, the third is written from what it kept.
  for (let i = 0; i < 3; i++) {
    const res = await request(g.url('neighbours/core/customer/kept-hub'), { headers: { authorization: `Bearer ${g.token}` } })
    bodies.push({ text: await res.body.text(), length: res.headers['content-length'] })
  }
  const [first, , kept] = bodies
  t.ok(first!.text.length > 128 * 1024, `larger than one slice (${first!.text.length} bytes)`)
  t.equal(kept!.text, first!.text, 'the kept answer is the answer')
  t.equal(Number(kept!.length), Buffer.byteLength(kept!.text), 'with its Content-Length')
  t.equal((JSON.parse(kept!.text) as unknown[]).length, 151)
})
