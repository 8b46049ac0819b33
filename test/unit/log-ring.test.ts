// The log's ring (src/log-ring.ts), writer and reader in one thread: the
// lines the reader writes are byte for byte those the front thread wrote
// before (the access line encoded directly, pino's lines as given), in
// order, across the ring's end many times; a full ring drops whole lines
// only, counts them and says so in a line of its own.
import t from 'tap'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { accessLineRoom, encodeAccessLine, fragmentOf } from '../../src/access-line'
import { LineSink } from '../../src/line-sink'
import { newRingBuffer, RingReader, RingWriter } from '../../src/log-ring'
import { requestIdParts, type RequestIdParts } from '../../src/request-id'

/** A reader's sink on a temporary file, and what it holds after flushSync. */
function fileSink(t: { teardown(fn: () => void): void }): { sink: LineSink; text: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'log-ring-'))
  const path = join(dir, 'log')
  const fd = openSync(path, 'w')
  t.teardown(() => {
    closeSync(fd)
    rmSync(dir, { recursive: true, force: true })
  })
  const sink = new LineSink(fd)
  return { sink, text: () => { sink.flushSync(); return readFileSync(path, 'utf8') } }
}

/** The access line as the front thread encoded it before the ring. */
function directLine(time: number, id: RequestIdParts, method: string, route: string, status: number, ms: number): string {
  const fragment = fragmentOf(method, route)
  const buf = Buffer.alloc(accessLineRoom(id, fragment))
  return buf.subarray(0, encodeAccessLine(buf, 0, time, id, fragment, status, ms)).toString()
}

type Entry = { text: string } | { time: number; id: RequestIdParts; method: string; route: string; status: number; ms: number }

function entries(n: number): Entry[] {
  const methods = ['GET', 'PUT', 'POST', 'DELETE', 'M-SEARCH', 'BREW']
  const routes = ['/graph/v1/:tenant/nodes/:ns/:type/:id', '/oauth2/v1/token', 'unmatched', '/health/ready']
  const out: Entry[] = []
  for (let i = 0; i < n; i++) {
    if (i % 13 === 0) out.push({ text: `{"level":30,"time":${i},"pid":1,"n":${i},"s":"${'é€😀'.repeat(i % 5)}${'x'.repeat(i % 700)}","msg":"pino"}\n` })
    else {
      const given = i % 11 === 0 ? `trace-${i}` : i % 17 === 0 ? '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' : ''
      const id = given.startsWith('00-') ? requestIdParts('', given) : requestIdParts(given, '')
      out.push({ time: 1_700_000_000_000 + i * 3, id, method: methods[i % methods.length]!, route: routes[i % routes.length]!, status: [200, 204, 404, 499, 503][i % 5]!, ms: Math.round(i * 0.0137 * 1e4) / 10 })
    }
  }
  return out
}

const expected = (e: Entry): string => ('text' in e ? e.text : `${directLine(e.time, e.id, e.method, e.route, e.status, e.ms)}`)
/** The entry's time, for the writer's clock. */
let clock = 0
const put = (w: RingWriter, e: Entry): boolean => {
  if ('text' in e) return w.text(e.text)
  clock = e.time
  return w.access(e.id, e.method, e.route, e.status, Math.round(e.ms * 10))
}

t.test('the reader writes the same bytes as the direct encoding, in order, across many wraps', async (t) => {
  const { sink, text } = fileSink(t)
  const buffer = newRingBuffer(4096)
  const writer = new RingWriter(buffer, () => clock)
  const reader = new RingReader(buffer, sink)
  const all = entries(5000)
  // Drained after 1, 2 or 3 records: records start at every offset and meet the ring's end in every way.
  for (let i = 0; i < all.length; i++) {
    t.ok(put(writer, all[i]!) || t.fail(`entry ${i} did not fit`))
    if (i % 3 === i % 2) reader.drain()
  }
  reader.drain()
  t.equal(writer.dropped, 0)
  const ours = text()
  const theirs = all.map(expected).join('')
  t.equal(ours.length, theirs.length)
  t.ok(ours === theirs, 'byte for byte')
})

t.test('a full ring drops whole lines, counts them and says so once it is read', async (t) => {
  const { sink, text } = fileSink(t)
  const buffer = newRingBuffer(1024)
  const writer = new RingWriter(buffer, () => clock)
  const reader = new RingReader(buffer, sink, 77)
  // Access records of one route (40 bytes each, after the route's and the id stem's own records).
  const all = Array.from({ length: 100 }, (_, i): Entry => ({ time: 1_700_000_000_000 + i, id: requestIdParts('', ''), method: 'GET', route: '/x', status: 200, ms: i / 10 }))
  let accepted = 0
  while (put(writer, all[accepted]!)) accepted++
  t.ok(accepted > 20 && accepted < 26, `${accepted} access records fit in 1 KiB`)
  for (let i = 0; i < 9; i++) t.notOk(put(writer, all[accepted + 1 + i]!))
  t.notOk(writer.text(`{"big":"${'x'.repeat(2000)}"}\n`), 'a line longer than the ring is dropped too')
  t.equal(writer.dropped, 11)
  reader.drain()
  t.ok(writer.text('{"after":1}\n'), 'once read, the ring takes lines again')
  reader.drain()
  const lines = text().split('\n').slice(0, -1)
  t.same(lines.slice(0, accepted), all.slice(0, accepted).map((e) => expected(e).slice(0, -1)), 'the lines before the ring was full, whole')
  const notice = JSON.parse(lines[accepted]!) as Record<string, unknown>
  t.match(notice, { level: 40, pid: 77, dropped: 11, msg: "log: 11 lines dropped: the log's ring was full" })
  t.equal(lines[accepted + 1], '{"after":1}')
  t.equal(lines.length, accepted + 2)
})

t.test('a ring size that is not a power of two is refused', async (t) => {
  t.throws(() => newRingBuffer(3000), /power of two/)
})
