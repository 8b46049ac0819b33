// Every line on the server's stderr is JSON (src/telemetry/stderr-guard.ts): what
// reaches descriptor 2 from outside the log (LMDB's C code writes there
// without a newline) is relayed as JSON lines, beside the log's own lines;
// the relay ends with the process, a kill -9 included, after writing what
// it had.
import t from 'tap'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, removeDir, tempDir } from '../helpers/server'
import { until } from '../../bench/wait'

/** A process that guards its stderr as the server does, then writes raw text to descriptor 2 and a line to the real stderr. */
const SCRIPT = `
require(${JSON.stringify(join(ROOT, 'dist', 'src', 'telemetry', 'start-stderr-guard.js'))})
const { writeSync } = require('node:fs')
const { stderrFd, stderrGuarded } = require(${JSON.stringify(join(ROOT, 'dist', 'src', 'telemetry', 'stderr-guard.js'))})
// Once the relay reads (it removes the FIFO's name then): what this process writes before can be lost if it ends first.
const reading = () => !require('node:fs').readdirSync(require('node:os').tmpdir()).some((n) => n.startsWith('graph-stderr-' + process.pid + '-'))
const waiting = setInterval(() => { if (reading()) { clearInterval(waiting); stderrGuarded().then(write) } }, 10)
function write() {
writeSync(2, 'Write error: No space left on device position 8192, size 4096')
setTimeout(() => {
  writeSync(stderrFd(), JSON.stringify({ level: 30, msg: 'from the log' }) + '\\n')
  console.error('a library prints this')
  writeSync(2, 'cut short at the end')
  if (process.argv[1] === 'kill') setTimeout(() => process.kill(process.pid, 'SIGKILL'), 20)
}, 200)
}
`

/**
 * Runs SCRIPT with stderr on `target`: a file, or a pipe (a shell's `|`; Node's own 'pipe' is a socket
 * pair, which cannot be opened again, so the guard leaves it alone).
 */
async function run(mode: string, target: 'file' | 'pipe'): Promise<{ stderr: string; signal: string | null }> {
  const dir = tempDir('stderr-guard-')
  try {
    const file = join(dir, 'stderr')
    const node = `${JSON.stringify(process.execPath)} -e "$SCRIPT" ${mode}`
    const command = target === 'file' ? `${node} >/dev/null 2>${JSON.stringify(file)}` : `set -o pipefail; ${node} 2>&1 >/dev/null | cat > ${JSON.stringify(file)}`
    // A plain program: none of tap's NODE_OPTIONS.
    const signal = await new Promise<string | null>((resolve, reject) => {
      const shell = spawn('bash', ['-c', `${command}; echo $? > ${JSON.stringify(join(dir, 'status'))}`], { stdio: 'ignore', env: { PATH: process.env.PATH, SCRIPT } })
      shell.on('error', reject)
      shell.on('close', () => resolve(Number(readFileSync(join(dir, 'status'), 'utf8')) === 137 ? 'SIGKILL' : null))
    })
    // The relay writes its last lines when the process has ended: as long as that takes (a pipe's reader waits for it).
    await until('the relay wrote the last line', () => readFileSync(file, 'utf8').includes('cut short at the end'), 15_000)
    return { stderr: readFileSync(file, 'utf8'), signal }
  } finally {
    removeDir(dir)
  }
}

/** SCRIPT with stderr on a socket pair, as Node's child_process makes every 'pipe' (and systemd's journal is a socket). */
function runOnSocket(mode: string): Promise<{ stderr: string; signal: string | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', SCRIPT, mode], { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH } })
    let stderr = ''
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (c: string) => { stderr += c })
    child.on('error', reject)
    let signal: string | null = null
    child.on('exit', (_code, s) => { signal = s })
    // 'close': every holder of the socket is gone, the relay included.
    child.on('close', () => resolve({ stderr, signal }))
  })
}

for (const [mode, target] of [['exit', 'file'], ['kill', 'file'], ['exit', 'pipe'], ['kill', 'pipe'], ['exit', 'socket'], ['kill', 'socket']] as const) {
  t.test(`every stderr line is JSON (${mode}, stderr a ${target})`, async (t) => {
    const { stderr, signal } = target === 'socket' ? await runOnSocket(mode) : await run(mode, target)
    if (mode === 'kill') t.equal(signal, 'SIGKILL', 'the process was killed')
    const lines = stderr.trimEnd().split('\n')
    for (const line of lines) t.doesNotThrow(() => JSON.parse(line), `JSON: ${line.slice(0, 80)}`)
    const msgs = lines.map((l) => (JSON.parse(l) as { msg: string }).msg)
    // Foreign writes that reach the relay together share a line (nothing tells where one ended): still JSON.
    const has = (text: string): boolean => msgs.some((m) => m.includes(text))
    t.ok(has('Write error: No space left on device position 8192, size 4096'), 'LMDB\'s raw text, in a JSON line')
    t.ok(msgs.includes('from the log'), 'the log\'s line whole, on its own')
    t.ok(has('a library prints this'), 'console.error wrapped')
    t.ok(has('cut short at the end'), 'text without a newline written when the process ends')
  })
}
