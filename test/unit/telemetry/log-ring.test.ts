// The log's ring (src/telemetry/log-ring.ts), writer and reader in one thread: the
// lines the reader writes are byte for byte those the front thread wrote
// before (the access line encoded directly, pino's lines as given), in
// order, across the ring's end many times; a full ring drops whole lines
// only, counts them and says so in a line of its own; a reader that takes
// over writes every line its predecessor had not written, and none it had.
// Then the log's real thread (the build's src/telemetry/log-worker.js) against a
// writer here, stalled, failing and killed at random points, and the
// ring taken from it: every line once, in order, or counted as dropped.
import t, { type Test } from 'tap'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { accessLineRoom, encodeAccessLine, fragmentOf } from '../../../src/telemetry/access-line'
import { LineSink } from '../../../src/telemetry/line-sink'
import { newRingBuffer, RingReader, RingWriter } from '../../../src/telemetry/log-ring'
import { requestIdParts, type RequestIdParts } from '../../../src/telemetry/request-id'
import { sleep } from '../../../bench/wait'

/** A file for the lines: its descriptor, what it holds, and a synchronous sink on it (as the log's thread has). */
function logFile(t: { teardown(fn: () => void): void }): { fd: number; sink: () => LineSink; read: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'log-ring-'))
  const path = join(dir, 'log')
  const fd = openSync(path, 'a')
  t.teardown(() => {
    closeSync(fd)
    rmSync(dir, { recursive: true, force: true })
  })
  return { fd, sink: () => new LineSink(fd, 16 * 1024, true), read: () => readFileSync(path, 'utf8') }
}

/** A reader's sink on a temporary file, and what it holds after flushSync. */
function fileSink(t: { teardown(fn: () => void): void }): { sink: LineSink; text: () => string } {
  const file = logFile(t)
  const sink = file.sink()
  return { sink, text: () => { sink.flushSync(); return file.read() } }
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
    if (i % 3 === i % 2) {
      reader.drain()
      reader.flush()
    }
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
  reader.flush()
  t.ok(writer.text('{"after":1}\n'), 'once written, the ring takes lines again')
  reader.drain()
  reader.flush()
  const lines = text().split('\n').slice(0, -1)
  t.same(lines.slice(0, accepted), all.slice(0, accepted).map((e) => expected(e).slice(0, -1)), 'the lines before the ring was full, whole')
  const notice = JSON.parse(lines[accepted]!) as Record<string, unknown>
  t.match(notice, { level: 40, pid: 77, dropped: 11, msg: "log: 11 lines dropped: the log's ring was full" })
  t.equal(lines[accepted + 1], '{"after":1}')
  t.equal(lines.length, accepted + 2)
})

/** Entries whose generated ids change stem every 7 lines (27 characters, as src/telemetry/request-id.ts's). */
function stemmed(n: number): Entry[] {
  const stems = Array.from({ length: 5 }, (_, k) => Buffer.from(`${'abcdefab-cdef-abcd-efab-cd'}${k}`, 'latin1'))
  return entries(n).map((e, i) => ('text' in e || e.id.givenId !== '' ? e : { ...e, id: { givenId: '', idStem: stems[Math.floor(i / 7) % 5]!, idSeq: i } }))
}

/** The file's lines, the drop notices apart (their sum, and how many). */
function split(text: string): { lines: string[]; dropped: number; notices: number } {
  const lines: string[] = []
  let dropped = 0
  let notices = 0
  for (const line of text.split('\n').slice(0, -1)) {
    const notice = /^\{"level":40,.*"dropped":(\d+),"msg":"log: \d+ lines dropped/.exec(line)
    if (notice === null) lines.push(line)
    else {
      dropped += Number(notice[1])
      notices++
    }
  }
  return { lines, dropped, notices }
}

t.test('a reader that takes over writes every line its predecessor read but had not written, once, and each drop once', async (t) => {
  const file = logFile(t)
  const buffer = newRingBuffer(4096)
  const writer = new RingWriter(buffer, () => clock)
  const all = stemmed(4000)
  const kept: Entry[] = []
  let reader = new RingReader(buffer, file.sink())
  let takeovers = 0
  for (let i = 0; i < all.length; i++) {
    if (put(writer, all[i]!)) kept.push(all[i]!)
    if (i % 40 === 39) {
      // Read, some of it written (a drain of more than 16 KiB writes a block), part of it not.
      reader.drain(i % 80 === 79 ? 2048 : Infinity)
      if (i % 120 === 119) reader.flush()
      if (i % 200 === 199) {
        // The reader's thread ends here: what it read and had not written is lost with its sink.
        reader = writer.readerFor(file.sink())
        takeovers++
      }
    }
  }
  reader.drain()
  reader.flush()
  t.ok(takeovers >= 19)
  t.ok(writer.dropped > 0, `${writer.dropped} lines dropped (the ring was full at times)`)
  const { lines, dropped } = split(file.read())
  t.equal(dropped, writer.dropped, 'each drop reported once')
  t.equal(lines.length, kept.length, 'every line kept, once')
  t.ok(lines.every((l, i) => `${l}\n` === expected(kept[i]!)), 'byte for byte, in order (the stems of ids by index)')
})

t.test('seize: the ring is taken only between two turns of its reader', async (t) => {
  const file = logFile(t)
  const buffer = newRingBuffer(4096)
  const writer = new RingWriter(buffer, () => clock)
  const reader = new RingReader(buffer, file.sink())
  t.ok(reader.acquire(), 'a turn')
  t.ok(writer.text('{"a":1}\n'))
  reader.drain()
  const started = Date.now()
  t.equal(writer.seize(file.sink(), 300), undefined, 'not during a turn that makes no progress')
  t.ok(Date.now() - started >= 250, 'after waiting for it')
  reader.release()
  const front = writer.seize(file.sink(), 300)
  t.ok(front !== undefined, 'between turns')
  t.notOk(reader.acquire(), 'and its reader has no more turns')
  front!.drain()
  front!.flush()
  t.equal(file.read(), '{"a":1}\n', 'the line its reader read and had not written, once')
  t.ok(writer.text('{"b":2}\n'))
  t.equal(writer.abandon(), 1, 'abandon counts the lines not written')
  t.equal(writer.dropped, 1)
})

/**
 * The log's thread as the server runs it, its writes made slow, partial,
 * refused (EAGAIN) and stalled at random, and the thread ended at random
 * points, in a turn (mid-drain) or between two; sometimes the ring is
 * seized from it instead. The writer here logs lines numbered 0..n-1.
 */
async function round(t: Test, seed: number, n: number): Promise<void> {
  const file = logFile(t)
  const buffer = newRingBuffer(16 * 1024)
  const writer = new RingWriter(buffer)
  let random = seed
  const next = (): number => (random = (random * 1103515245 + 12345) % 2147483648) / 2147483648
  const dist = join(__dirname, '..', '..', '..', 'dist', 'src', 'telemetry')
  const worker = new Worker(`
    const fs = require('node:fs')
    const { workerData } = require('node:worker_threads')
    let x = workerData.seed
    const rand = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
    const pause = new Int32Array(new SharedArrayBuffer(4))
    const write = fs.writeSync
    fs.writeSync = (fd, buf, off) => {
      const r = rand()
      if (r < 0.1) throw Object.assign(new Error('busy'), { code: 'EAGAIN' })
      if (r < 0.3) Atomics.wait(pause, 0, 0, Math.floor(rand() * 15))
      const left = buf.length - off
      return write(fd, buf, off, r < 0.5 ? Math.max(1, Math.floor(left * rand())) : left)
    }
    const { RingReader } = require(${JSON.stringify(join(dist, 'log-ring.js'))})
    const line = RingReader.prototype.accessLine
    let lines = 0
    RingReader.prototype.accessLine = function (at) {
      if (++lines === workerData.dieAtLine) throw new Error('a fault in a turn')
      return line.call(this, at)
    }
    if (workerData.dieAfterMs >= 0) setTimeout(() => { throw new Error('a fault between turns') }, workerData.dieAfterMs)
    require(${JSON.stringify(join(dist, 'log-worker.js'))})`, {
    eval: true,
    workerData: { ring: buffer, fd: file.fd, pid: 1, seed, dieAtLine: next() < 0.4 ? Math.floor(next() * n) : -1, dieAfterMs: next() < 0.4 ? Math.floor(next() * 300) : -1 },
  })
  const gone = new Promise<void>((resolve) => worker.on('exit', () => resolve()))
  worker.on('error', () => undefined)
  await new Promise((resolve) => worker.once('online', resolve))
  // As src/telemetry/log.ts: a reader here once the thread has ended, or once the ring is seized.
  let front: RingReader | undefined
  void gone.then(() => { front ??= writer.readerFor(file.sink()) })
  const seizeAt = next() < 0.3 ? Math.floor(next() * n) : -1
  const seq = (i: number): Entry => (i % 5 === 0 ? { text: `{"i":${i}}\n` } : { time: 1_700_000_000_000, id: requestIdParts(i % 7 === 0 ? `given-${i}` : '', ''), method: i % 9 === 0 ? 'BREW' : 'GET', route: `/r/${i % 4}`, status: 200, ms: i / 10 })
  for (let i = 0; i < n;) {
    // Bursts of up to about half the ring, at most one a millisecond: the thread can keep up, when not stalled.
    for (let k = Math.floor(next() * 200); k >= 0 && i < n; k--, i++) {
      put(writer, seq(i))
      if (i === seizeAt && front === undefined) {
        front = writer.seize(file.sink(), 10_000)
        t.ok(front !== undefined, 'seized')
        void worker.terminate()
      }
    }
    if (front !== undefined) {
      front.drain()
      front.flush()
    }
    await sleep(next() < 0.2 ? 0 : 1 + Math.floor(next() * 3))
  }
  // As src/telemetry/log.ts flushLog: the thread writes the rest, or this thread does, once it has the ring.
  if (front === undefined && !writer.waitFlushed(writer.askFlush(), 3000)) front = writer.seize(file.sink(), 3000)
  if (front !== undefined) {
    front.drain()
    front.flush()
  }
  void worker.terminate()
  await gone
  const { lines, dropped, notices } = split(file.read())
  const numbers = lines.map((l) => {
    const json = JSON.parse(l) as { i?: number; ms?: number }
    return json.i ?? Math.round(json.ms! * 10)
  })
  const repeated = numbers.filter((x, i) => i > 0 && x <= numbers[i - 1]!).length
  t.equal(repeated, 0, `seed ${seed}: no line twice, none out of order`)
  t.equal(numbers.length + dropped, n, `seed ${seed}: ${numbers.length} lines written, ${dropped} dropped (in ${notices} notices): every line written or counted`)
  t.equal(dropped, writer.dropped, `seed ${seed}: the notices say what the counter says`)
}

t.test('the log thread under contention: every line once, in order, or counted as dropped', async (t) => {
  for (let seed = 1; seed <= 24; seed++) await round(t, seed, 4000 + seed * 500)
})

t.test('a ring size that is not a power of two is refused', async (t) => {
  t.throws(() => newRingBuffer(3000), /power of two/)
})
