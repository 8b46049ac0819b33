// The log's thread (src/telemetry/log.ts startLogThread, src/telemetry/log-worker.ts) in a real
// process of the compiled build: whatever way the process ends, every line
// logged before is on stderr, whole and in order; if the log's thread dies,
// the main thread writes the ring's rest and every line after it; a full
// ring drops whole lines and counts every one of them. The same with the
// machine's cores kept busy by other processes and stderr read slowly: the
// log's thread starved and its writes waiting, no line is lost or repeated.
import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

const DIST = join(__dirname, '..', '..', 'dist')

/** Runs `body` in a node process with the log's modules loaded; its stdout, stderr's lines and exit code. `slow`: stderr read a chunk every 50 ms. */
async function run(body: string, slow = false): Promise<{ out: string; lines: string[]; code: number | null }> {
  const script = `
    const { log, accessLine, startLogThread, flushLog, droppedLogLines } = require(${JSON.stringify(join(DIST, 'src', 'telemetry', 'log.js'))})
    const { requestIdParts } = require(${JSON.stringify(join(DIST, 'src', 'telemetry', 'request-id.js'))})
    /** Line i: an access line whose duration is i tenths, a pino line every 100. */
    const line = (i) => { if (i % 100 === 0) log.info({ i }, 'mark'); accessLine(requestIdParts(i % 7 === 0 ? 'given-' + i : '', ''), i % 3 === 0 ? 'PUT' : 'GET', '/r/' + (i % 5), 200, i) }
    ${body}`
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (s: string) => { out += s })
  child.stderr.setEncoding('utf8').on('data', (s: string) => {
    err += s
    if (!slow) return
    child.stderr.pause()
    setTimeout(() => child.stderr.resume(), 50)
  })
  // 'close', not 'exit': the pipes may still hold lines when the process has exited.
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
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

/** Busy loops in processes of their own, one more than the machine has cores, until the test ends. */
function loadTheMachine(t: Test): void {
  const busy: ChildProcess[] = []
  for (let i = 0; i <= availableParallelism(); i++) busy.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
  t.teardown(() => { for (const child of busy) child.kill('SIGKILL') })
}

function scenarios(t: Test, slow: boolean): void {
  t.test('flushLog then process.exit: every line is out (a burst within the ring)', async (t) => {
    const { lines, code } = await run(`startLogThread(); for (let i = 0; i < 50000; i++) line(i); flushLog(); process.exit(0)`, slow)
    t.equal(code, 0)
    inOrder(t, parse(t, lines).json, 50_000)
  })

  t.test('an uncaught exception: the exit hook writes every line first', async (t) => {
    const { lines, code } = await run(`startLogThread(); for (let i = 0; i < 50000; i++) line(i); throw new Error('the end')`, slow)
    t.equal(code, 1)
    inOrder(t, parse(t, lines).json, 50_000)
    t.ok(lines.some((l) => l.includes('Error: the end')), 'and the exception after them')
  })

  t.test('the log thread dies: the main thread writes the ring\'s rest and everything after, in order', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'log-thread-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const dying = join(dir, 'dying.js')
    const died = join(dir, 'died')
    writeFileSync(dying, `require(${JSON.stringify(join(DIST, 'src', 'telemetry', 'log-worker.js'))}); setTimeout(() => { require('node:fs').writeFileSync(${JSON.stringify(died)}, ''); throw new Error('log thread fault') }, 40)\n`)
    // Lines for 1.5 s, and for 1.5 s after the thread's end (40 ms after its start, later on a busy machine).
    const { out, lines, code } = await run(`
      startLogThread({ workerFile: ${JSON.stringify(dying)} })
      let i = 0
      let start = Date.now()
      let dead = false
      const burst = () => {
        for (let k = 0; k < 200; k++) line(i++)
        if (!dead && require('node:fs').existsSync(${JSON.stringify(died)})) { dead = true; start = Date.now() }
        if (!dead || Date.now() - start < 1500) setTimeout(burst, 1); else { console.log(i); flushLog(); process.exit(0) }
      }
      burst()`, slow)
    t.equal(code, 0)
    const { json } = parse(t, lines)
    const dropped = json.filter((j) => typeof j.dropped === 'number').reduce((sum, j) => sum + (j.dropped as number), 0)
    // A stderr read slowly holds the thread up: the ring can fill before it dies (then lines are dropped, and counted).
    const n = Number(out.trim())
    if (dropped === 0) inOrder(t, json, n)
    else {
      const numbers = parse(t, lines).numbers
      t.ok(numbers.every((x, i) => i === 0 || x > numbers[i - 1]!), 'the lines kept are in order, none twice')
      t.equal(json.filter((j) => j.msg === 'request' || j.msg === 'mark').length + dropped, n + Math.ceil(n / 100), `${dropped} lines dropped, every one counted`)
    }
    const notice = json.find((j) => typeof j.msg === 'string' && j.msg.startsWith('log: the log thread stopped'))
    t.match(notice, { level: 50, err: { message: 'log thread fault' } }, 'the thread\'s end is logged')
  })
}

scenarios(t, false)

t.test('on a busy machine, stderr read slowly', async (t) => {
  loadTheMachine(t)
  scenarios(t, true)
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
