// The log's line sink: every line arrives once, whole and in order, whatever
// its size (short lines batched into blocks, a line longer than a block on
// its own), through the asynchronous writes, the timer's flush and flushSync.
import t from 'tap'
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LineSink } from '../../../src/telemetry/line-sink'
import { sleep } from '../../../bench/wait'

function tempFile(t: { teardown(fn: () => void): void }): { path: string; fd: number } {
  const dir = mkdtempSync(join(tmpdir(), 'line-sink-'))
  const path = join(dir, 'log')
  const fd = openSync(path, 'w')
  t.teardown(() => {
    closeSync(fd)
    rmSync(dir, { recursive: true, force: true })
  })
  return { path, fd }
}

/** Waits until the file holds `bytes` bytes (the asynchronous writes land on their own). */
async function waitForSize(path: string, bytes: number): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const text = readFileSync(path, 'utf8')
    if (Buffer.byteLength(text) >= bytes) return text
    await sleep(10)
  }
  return readFileSync(path, 'utf8')
}

t.test('many lines of every size arrive whole and in order', async (t) => {
  const { path, fd } = tempFile(t)
  const sink = new LineSink(fd, 4096)
  const lines: string[] = []
  for (let i = 0; i < 5000; i++) {
    // Mostly access-line sized; some non-ASCII (3 and 4 bytes per character); a few longer than a block.
    const body = i % 997 === 0 ? 'L'.repeat(70_000 + i) : i % 7 === 0 ? `€😀 ${i}` : 'x'.repeat(i % 300)
    lines.push(`{"n":${i},"s":"${body}"}\n`)
  }
  for (const line of lines) sink.write(line)
  sink.flush()
  const expected = lines.join('')
  const text = await waitForSize(path, Buffer.byteLength(expected))
  t.equal(text.length, expected.length)
  t.ok(text === expected, 'the file holds every line once, in order')
})

t.test('the timer flush writes a quiet sink\'s few lines; flushSync writes what is gathered at once', async (t) => {
  const { path, fd } = tempFile(t)
  const sink = new LineSink(fd)
  sink.write('{"a":1}\n')
  await sleep(50)
  t.equal(readFileSync(path, 'utf8'), '', 'fewer bytes than a block wait for the flush')
  sink.flush()
  t.equal(await waitForSize(path, 8), '{"a":1}\n')
  sink.write('{"b":2}\n')
  sink.write('{"c":3}\n')
  sink.flushSync()
  t.equal(readFileSync(path, 'utf8'), '{"a":1}\n{"b":2}\n{"c":3}\n', 'synchronously, before an exit')
})

t.test('lines encoded in place (room, commit) keep their order among written ones', async (t) => {
  const { path, fd } = tempFile(t)
  const sink = new LineSink(fd, 1024)
  let expected = ''
  for (let i = 0; i < 3000; i++) {
    const line = `{"i":${i}}\n`
    expected += line
    if (i % 2 === 0) sink.write(line)
    else {
      const buf = sink.room(line.length)
      sink.commit(sink.offset + buf.write(line, sink.offset))
    }
  }
  const big = `{"big":"${'b'.repeat(70_000)}"}\n`
  const buf = sink.room(big.length)
  sink.commit(sink.offset + buf.write(big, sink.offset))
  expected += big
  sink.flush()
  t.ok(await waitForSize(path, expected.length) === expected)
})
