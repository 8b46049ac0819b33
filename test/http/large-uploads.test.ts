// A body far over MAX_BODY (20 MB and 100 MB to 1 MiB) from node:http and
// undici, with and without Expect: 100-continue, declared or chunked: the
// server reads and drops it to its end and the client reads its 413, no
// reset (src/http/body.ts, docs/manual/http-edges.md). A sender that stops
// half-way gets the 413 after the idle time and the connection closes.
import t from 'tap'
import { request as httpRequest } from 'node:http'
import { request } from 'undici'
import { rawExchange, statuses } from '../helpers/raw-http'
import { serverForFile } from '../helpers/server'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

const MIB = 1024 * 1024
const fixture = serverForFile(t, { args: ['--max-body', String(MIB)] })
const tokenUrl = (): string => `${fixture.server.url}/oauth2/v1/token`
const FORM = 'application/x-www-form-urlencoded'
const CHUNK = Buffer.alloc(MIB, 0x61)

interface Seen {
  status?: number
  body: string
  /** The first socket error, if it came before the answer. */
  error?: string
  /** Whether the server said 100 Continue first. */
  continued: boolean
}

/** node:http: `size` bytes in 1 MiB writes (waiting for 'drain'), declared or chunked, optionally waiting for 100 Continue. */
function nodeUpload(size: number, options: { chunked?: boolean; expectContinue?: boolean } = {}): Promise<Seen> {
  return new Promise((resolve) => {
    const seen: Seen = { body: '', continued: false }
    const headers: Record<string, string> = { 'content-type': FORM }
    if (options.chunked !== true) headers['content-length'] = String(size)
    if (options.expectContinue === true) headers.expect = '100-continue'
    const req = httpRequest(tokenUrl(), { method: 'POST', headers })
    let answered = false
    req.on('response', (res) => {
      answered = true
      seen.status = res.statusCode
      res.setEncoding('utf8')
      res.on('data', (d: string) => { seen.body += d })
      res.on('end', () => resolve(seen))
      res.on('error', () => resolve(seen))
    })
    req.on('error', (err: NodeJS.ErrnoException) => {
      // After the answer the server closes the connection: a late EPIPE is no matter.
      if (answered) return
      seen.error = err.code ?? err.message
      resolve(seen)
    })
    const send = (): void => {
      let sent = 0
      const more = (): void => {
        while (sent < size) {
          const n = Math.min(CHUNK.length, size - sent)
          sent += n
          if (!req.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
            req.once('drain', more)
            return
          }
        }
        req.end()
      }
      more()
    }
    if (options.expectContinue === true) {
      req.on('continue', () => {
        seen.continued = true
        send()
      })
      req.flushHeaders()
    } else send()
  })
}

function isThe413(t: tap.Test, seen: Seen, what: string): void {
  t.equal(seen.error, undefined, `${what}: no reset`)
  t.equal(seen.status, 413, what)
  t.match(seen.body, /"type":"payload_too_large"/, `${what}: the whole answer`)
}

t.test('node:http, 20 MB and 100 MB declared: the client reads its 413', async (t) => {
  isThe413(t, await nodeUpload(20 * 1000 * 1000), '20 MB')
  isThe413(t, await nodeUpload(100 * 1000 * 1000), '100 MB')
})

t.test('node:http, 20 MB chunked (no length): the 413 too', async (t) => {
  isThe413(t, await nodeUpload(20 * 1000 * 1000, { chunked: true }), '20 MB chunked')
})

t.test('node:http with Expect: 100-continue: the library says 100 Continue, the body is sent and dropped, then the 413', async (t) => {
  const seen = await nodeUpload(20 * 1000 * 1000, { expectContinue: true })
  t.ok(seen.continued, '100 Continue came before any answer')
  isThe413(t, seen, '20 MB after 100 Continue')
})

t.test('undici, 20 MB and 100 MB: the client reads its 413', async (t) => {
  for (const size of [20 * 1000 * 1000, 100 * 1000 * 1000]) {
    const res = await request(tokenUrl(), { method: 'POST', headers: { 'content-type': FORM }, body: Buffer.alloc(size, 0x61) })
    t.equal(res.statusCode, 413, `${size} bytes`)
    t.match(await res.body.text(), /"type":"payload_too_large"/)
  }
})

t.test('a sender that stops half-way: the 413 after the idle time, and the connection closes', async (t) => {
  const started = Date.now()
  const stalled = await rawExchange(fixture.server.url, [
    `POST /oauth2/v1/token HTTP/1.1\r\nHost: x\r\nContent-Type: ${FORM}\r\nContent-Length: ${20 * MIB}\r\n\r\n`, Buffer.alloc(2 * MIB, 0x61),
  ], 30_000)
  const waited = Date.now() - started
  t.same(statuses(stalled.text), [413])
  t.ok(stalled.closed, 'closed by the server')
  t.ok(waited >= 4_000 && waited < 25_000, `after about 5 s without data (${waited} ms)`)
  t.equal((await request(`${fixture.server.url}/errors`)).statusCode, 200, 'the server goes on')
})
