// The log's thread (src/log.ts startLogThread, src/log-worker.ts) in a real
// process of the compiled build: whatever way the process ends, every line
// logged before is on stderr, whole and in order; if the log's thread dies,
// the main thread writes the ring's rest and every line after it; a full
// ring drops whole lines and counts every one of them.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const DIST = join(__dirname, '..', '..', 'dist')

/** Runs `body` in a node process with the log's modules loaded; its stdout, stderr's lines and exit code. */
async function run(body: string, env: Record<string, string> = {}): Promise<{ out: string; lines: string[]; code: number | null }> {
  const script = `
    const { log, accessLine, startLogThread, flushLog, droppedLogLines } = require(${JSON.stringify(join(DIST, 'src', 'log.js'))})
    const { requestIdParts } = require(${JSON.stringify(join(DIST, 'src', 'request-id.js'))})
    /** Line i: an access line whose duration is i tenths, a pino line every 100. */
    const line = (i) => { if (i % 100 === 0) log.info({ i }, 'mark'); accessLine(requestIdParts(i % 7 === 0 ? 'given-' + i : '', ''), i % 3 === 0 ? 'PUT' : 'GET', '/r/' + (i % 5), 200, i) }
    ${body}`
  const child = spawn(process.execPath, ['-e', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
  child.stderr.setEncoding('utf8').on('data', (s: string) => { err += s })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  await new Promise((r) => setImmediate(r))
  return { out, lines: err.split('\n').filter((l) => l !== ''), code }
}

type Json = Record<string, unknown>

/** The JSON lines (every stderr line that starts with `{` must parse whole) and the access lines' numbers. */
function parse(t: Test, lines: string[]): { json: Json[]; numbers: number[] } {
  const json: Json[] = []
  for (const l of lines.filter((l) => l.startsWith('{'))) {
    try {
      json.push(JSON.parse(l) as Json)
    } catch {
      t.fail(`a broken line: ${l.slice(0, 200)}`)
    }
  }
  const numbers = json.filter((j) => j.msg === 'request').map((j) => Math.round((j.ms as number) * 10))
  return { json, numbers }
}

/** Each access line's number once, in order, and each mark just before its number. */
function inOrder(t: Test, json: Json[], n: number): void {
  const expected: string[] = []
  for (let i = 0; i < n; i++) {
    if (i % 100 === 0) expected.push(`mark ${i}`)
    expected.push(`request ${i}`)
  }
  const seen = json.filter((j) => j.msg === 'request' || j.msg === 'mark').map((j) => (j.msg === 'mark' ? `mark ${j.i as number}` : `request ${Math.round((j.ms as number) * 10)}`))
  t.equal(seen.length, expected.length, `${expected.length} lines`)
  t.ok(seen.every((s, i) => s === expected[i]), 'every line once, in the order logged')
  const ids = json.filter((j) => j.msg === 'request').map((j) => j.requestId as string)
  t.ok(ids.every((id, i) => (i % 7 === 0 ? id === `given-${i}` : /^[0-9a-f-]{24}\d{12}$/.test(id))), 'given and generated request ids')
}

t.test('flushLog then process.exit: every line is out (a burst within the ring)', async (t) => {
  const { lines, code } = await run(`startLogThread(); for (let i = 0; i < 50000; i++) line(i); flushLog(); process.exit(0)`)
  t.equal(code, 0)
  inOrder(t, parse(t, lines).json, 50_000)
})

t.test('an uncaught exception: the exit hook writes every line first', async (t) => {
  const { lines, code } = await run(`startLogThread(); for (let i = 0; i < 50000; i++) line(i); throw new Error('the end')`)
  t.equal(code, 1)
  inOrder(t, parse(t, lines).json, 50_000)
  t.ok(lines.some((l) => l.includes('Error: the end')), 'and the exception after them')
})

t.test('the log thread dies: the main thread writes the ring\'s rest and everything after, in order', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'log-thread-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const dying = join(dir, 'dying.js')
  writeFileSync(dying, `require(${JSON.stringify(join(DIST, 'src', 'log-worker.js'))}); setTimeout(() => { throw new Error('log thread fault') }, 40)\n`)
  // Lines for 1.5 s, of which the thread lives 40 ms after its start.
  const { out, lines, code } = await run(`
    startLogThread({ workerFile: ${JSON.stringify(dying)} })
    let i = 0
    const start = Date.now()
    const burst = () => { for (let k = 0; k < 200; k++) line(i++); if (Date.now() - start < 1500) setTimeout(burst, 1); else { console.log(i); flushLog(); process.exit(0) } }
    burst()`)
  t.equal(code, 0)
  const { json } = parse(t, lines)
  inOrder(t, json, Number(out.trim()))
  const notice = json.find((j) => typeof j.msg === 'string' && j.msg.startsWith('log: the log thread stopped'))
  t.match(notice, { level: 50, err: { message: 'log thread fault' } }, 'the thread\'s end is logged')
})

t.test('a full ring: whole lines dropped, every one counted', async (t) => {
  const { out, lines, code } = await run(`
    startLogThread({ ringBytes: 1024 })
    for (let i = 0; i < 20000; i++) line(i)
    // flushLog waits for the log's thread to have read the ring: then there is room again.
    flushLog(); line(20000); console.log(droppedLogLines()); flushLog(); process.exit(0)`)
  t.equal(code, 0)
  const { json, numbers } = parse(t, lines)
  const dropped = json.filter((j) => typeof j.dropped === 'number').reduce((sum, j) => sum + (j.dropped as number), 0)
  const written = json.filter((j) => j.msg === 'request' || j.msg === 'mark').length
  t.ok(dropped > 0, `${dropped} lines dropped`)
  t.equal(Number(out.trim()), dropped, 'droppedLogLines (the metric) counts what the notices say')
  t.equal(written + dropped, 20001 + 201, 'each line written or counted')
  t.ok(numbers.every((n, i) => i === 0 || n > numbers[i - 1]!), 'the lines kept are in order')
  t.equal(numbers.at(-1), 20000, 'and lines get through again')
})
