// The access line is encoded by hand, not by pino: it must be the line
// pino writes for the same fields (keys, order, values), and the request ids
// it writes unquoted must be JSON-safe whatever the caller sent. Generated ids
// are UUID-shaped, share the process's random prefix and never repeat.
import t from 'tap'
import pino from 'pino'
import { accessLineRoom, encodeAccessLine, fragmentOf } from '../../../src/telemetry/access-line'
import { requestIdOf, requestIdParts, requestIdText, type RequestIdParts } from '../../../src/telemetry/request-id'

/** A caller's id, as the exchange holds it. */
const given = (givenId: string): RequestIdParts => ({ givenId, idStem: Buffer.alloc(0), idSeq: 0 })

/** The line encodeAccessLine writes, as text (into a buffer with other bytes before it, as in the sink). */
function formatAccessLine(time: number, requestId: string | RequestIdParts, method: string, route: string, status: number, ms: number): string {
  const fragment = fragmentOf(method, route)
  const id = typeof requestId === 'string' ? given(requestId) : requestId
  const buf = Buffer.alloc(7 + accessLineRoom(id, fragment), 0xff)
  const end = encodeAccessLine(buf, 7, time, id, fragment, status, ms)
  t.ok(end <= buf.length)
  return buf.subarray(7, end).toString()
}

function pinoLine(fields: Record<string, unknown>, time: number): string {
  let out = ''
  const logger = pino({ level: 'info', base: { pid: process.pid }, timestamp: () => `,"time":${time}` }, { write: (s: string) => { out += s } })
  logger.info(fields, 'request')
  return out
}

t.test('the same line pino writes', async (t) => {
  const cases: Array<[string | RequestIdParts, string, string, number, number]> = [
    ['trace-put-l1', 'PUT', '/graph/v1/:tenant/nodes/:ns/:type/:id', 204, 1.3],
    [requestIdParts('', ''), 'GET', '/oauth2/v1/.well-known/openid-configuration', 200, 0],
    ['a.b:c@d/e+f=g-h_i', 'M-SEARCH', 'unmatched', 499, 12345.6],
    ['t', 'GET', '/x', 200, 7],
    ['t', 'GET', '/x', 200, Math.round(0.00123456 * 1e4) / 10],
  ]
  for (const [requestId, method, route, status, ms] of cases) {
    const ours = formatAccessLine(1700000000123, requestId, method, route, status, ms)
    const text = typeof requestId === 'string' ? requestId : requestIdText(requestId)
    t.equal(ours, pinoLine({ requestId: text, method, route, status, ms }, 1700000000123), `${method} ${route}`)
  }
})

t.test('request ids are JSON-safe, whatever the headers held', async (t) => {
  const hostile = ['"quoted"', 'back\\slash', 'line\nbreak', 'tab\there', '\u2028', 'é', '', 'x'.repeat(129)]
  for (const traceId of hostile) {
    for (const traceParent of ['', '00-"4bf92f3577b34da6a3ce929d0e0e4736"-00f067aa0ba902b7-01', traceId]) {
      const id = requestIdParts(traceId, traceParent)
      t.same(JSON.parse(formatAccessLine(1, id, 'GET', '/x', 200, 1)).requestId, requestIdText(id))
    }
  }
})

t.test('generated ids: UUID-shaped, one random prefix per process, a counter after it', async (t) => {
  const ids = Array.from({ length: 10_000 }, () => requestIdOf('', ''))
  t.equal(new Set(ids).size, ids.length, 'no id repeats')
  for (const id of [ids[0]!, ids.at(-1)!]) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9]{12}$/)
  t.equal(new Set(ids.map((id) => id.slice(0, 24))).size, 1, 'the random part is drawn once')
  t.equal(Number(ids.at(-1)!.slice(24)) - Number(ids[0]!.slice(24)), ids.length - 1, 'the last group counts')
  let last = ids.at(-1)!
  for (let i = 0; i < 1_000_000; i++) last = requestIdOf('', '')
  t.equal(Number(last.slice(24)) - Number(ids[0]!.slice(24)), ids.length - 1 + 1_000_000, 'on past a million (the counter is kept in two parts)')
  t.equal(last.slice(0, 24), ids[0]!.slice(0, 24))
})

t.test('every millisecond and duration is written as pino writes it', async (t) => {
  let bad = 0
  for (let i = 0; i < 20_000; i++) {
    const time = 1_700_000_000_000 + i * 7
    const ms = Math.round(i * 0.00123 * 1e4) / 10
    if (formatAccessLine(time, 't', 'GET', '/x', 200, ms) !== pinoLine({ requestId: 't', method: 'GET', route: '/x', status: 200, ms }, time)) bad++
  }
  t.equal(bad, 0)
})
