// The start contract: one server per data directory (a second start fails
// with one line naming the holder; a killed holder does not block), one-line
// errors for a port in use or a bad flag, --help, owner-only files, the
// bound address in the `listening` line, and credentials printed only for the
// shipped demo bootstrap.
import t from 'tap'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ENTRY, ROOT, removeDir, startServer, tempDir } from '../helpers/server'

interface Exit { code: number | null; stdout: string; stderr: string }

/**
 * Runs the entry to its exit (it is expected to stop by itself). `user` runs it as that uid and gid (this
 * process being root), without tap's hook (NODE_OPTIONS, which tap adds to every child): it would write tap's files as that user.
 */
function run(args: string[], env: Record<string, string> = {}, user?: number): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const command = user === undefined ? [process.execPath, ENTRY, ...args] : ['env', '-u', 'NODE_OPTIONS', process.execPath, ENTRY, ...args]
    const proc = spawn(command[0]!, command.slice(1), { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], uid: user, gid: user })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    proc.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const timer = setTimeout(() => {
      proc.kill('SIGKILL')
      reject(new Error(`did not exit:\n${stdout}${stderr}`))
    }, 30_000)
    proc.once('exit', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

function serverArgs(dir: string, dataDir = join(dir, 'data')): string[] {
  return ['--port', '0', '--data-dir', dataDir, '--master-key-file', join(dir, 'secrets', 'master.key'), '--workers', '1', '--bootstrap', '']
}

function oneLineError(t: tap.Test, e: Exit, pattern: RegExp): void {
  t.not(e.code, 0, 'exits non-zero')
  t.equal(e.stderr.trim().split('\n').length, 1, `one line: ${e.stderr}`)
  t.match(e.stderr, pattern)
  t.notMatch(e.stderr, /\n\s+at /, 'no stack trace')
}

t.test('a second server on the same data directory is refused, naming the holder; a killed holder does not block', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const first = await startServer({ dataDir: dir })
  const second = await run(serverArgs(dir))
  oneLineError(t, second, new RegExp(`^error: data directory .* is in use by the server \\(process ${first.proc.pid}, since .*, listening ${first.url}\\); stop it first`))
  await first.kill()
  const third = await startServer({ dataDir: dir })
  t.pass('started after the holder was killed with SIGKILL')
  await third.stop()
})

t.test('a port in use and a bad flag are one line, not a stack trace', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const first = await startServer({ dataDir: dir })
  t.teardown(() => first.stop())
  const port = new URL(first.url).port
  const other = tempDir()
  t.teardown(() => removeDir(other))
  oneLineError(t, await run([...serverArgs(other), '--port', port]), new RegExp(`^error: cannot listen on 127\\.0\\.0\\.1:${port}`))
  oneLineError(t, await run(['--nope', '1']), /^error: unknown option --nope/)
  oneLineError(t, await run(['--port', 'x']), /^error: --port must be a whole number/)
})

t.test('a key file that is a directory, a data directory that is a file or that this user may not read: one line each', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  mkdirSync(join(dir, 'secrets', 'master.key'), { recursive: true, mode: 0o700 })
  oneLineError(t, await run(serverArgs(dir)), /^error: master key file .*master\.key is a directory; give the path of the key file itself/)
  removeDir(join(dir, 'secrets'))
  mkdirSync(join(dir, 'shred.log'))
  oneLineError(t, await run([...serverArgs(dir), '--shred-log', join(dir, 'shred.log')]), /^error: the shred log .*shred\.log is not a regular file/)
  removeDir(join(dir, 'data'))
  removeDir(join(dir, 'secrets'))
  writeFileSync(join(dir, 'file'), '')
  oneLineError(t, await run(serverArgs(dir, join(dir, 'file'))), /^error: data directory .*file cannot be used: .*file is not a directory/)
  oneLineError(t, await run(serverArgs(dir, join(dir, 'file', 'data'))), /^error: data directory .*file\/data cannot be used: a part of the path .* is a file, not a directory/)
  // Unreadable: mode 000 stops anyone but root, so as root the server runs as nobody on a directory only root may enter.
  const locked = join(dir, 'locked')
  mkdirSync(locked, { mode: 0o700 })
  const root = process.getuid?.() === 0
  if (root) chmodSync(dir, 0o755)
  else {
    chmodSync(locked, 0o000)
    t.teardown(() => chmodSync(locked, 0o700))
  }
  oneLineError(t, await run(serverArgs(dir, locked), {}, root ? 65534 : undefined), /^error: data directory .*locked cannot be used: .*locked may not be read or written by the user the server runs as/)
})

t.test('cluster mode: half its options, or no NATS server to reach, is one line', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  oneLineError(t, await run([...serverArgs(dir), '--nats-url', 'nats://127.0.0.1:1']), /^error: cluster mode needs --nats-url, --node-id and --kek-file; missing --node-id, --kek-file/)
  const cluster = ['--nats-url', 'nats://127.0.0.1:1', '--node-id', 'a', '--kek-file', join(dir, 'kek')]
  oneLineError(t, await run([...serverArgs(dir), ...cluster]), /^error: KEK file .* is missing; in cluster mode every host is given the same KEK file/)
  mkdirSync(join(dir, 'kek'), { mode: 0o700 })
  oneLineError(t, await run([...serverArgs(dir), ...cluster]), /^error: KEK file .*kek is a directory; give the path of the key file itself/)
  removeDir(join(dir, 'kek'))
  writeFileSync(join(dir, 'kek'), 'not a key\n', { mode: 0o600 })
  oneLineError(t, await run([...serverArgs(dir), ...cluster]), /^error: KEK file .* must hold one base64 32-byte key per line/)
  writeFileSync(join(dir, 'kek'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 })
  oneLineError(t, await run([...serverArgs(dir), ...cluster]), /^error: .*NATS/)
})

t.test('--help prints the usage from the options table', async (t) => {
  const e = await run(['--help'])
  t.equal(e.code, 0)
  t.match(e.stdout, /^usage: /)
  for (const flag of ['--port', '--data-dir', '--bootstrap', '--public-url', '--shutdown-timeout', 'MASTER_KEY_FILE']) t.match(e.stdout, flag)
})

t.test('the data directory is 0700 and every file in it 0600, also those made before', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  // A directory left readable by others, with a readable file in it.
  mkdirSync(join(dir, 'data'), { mode: 0o755 })
  chmodSync(join(dir, 'data'), 0o755)
  writeFileSync(join(dir, 'data', 'notes.txt'), 'x', { mode: 0o644 })
  chmodSync(join(dir, 'data', 'notes.txt'), 0o644)
  const server = await startServer({ dataDir: dir })
  await server.stop()
  t.match(server.output(), /warning: 2 entries of .*data were readable by other users; they are now owner-only/)
  const bad: string[] = []
  const visit = (p: string): void => {
    const st = statSync(p)
    const want = st.isDirectory() ? 0o700 : 0o600
    if ((st.mode & 0o777) !== want) bad.push(`${p} ${(st.mode & 0o777).toString(8)}`)
    if (st.isDirectory()) for (const name of readdirSync(p)) visit(join(p, name))
  }
  visit(join(dir, 'data'))
  t.same(bad, [], 'directories 0700, files 0600')
  t.ok(readdirSync(join(dir, 'data', 'shards')).length > 0 && readdirSync(join(dir, 'data', 'auth')).includes('data.mdb'), 'the stores were there to check')
})

t.test('the listening line names the bound address; PUBLIC_URL gets its own line', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const server = await startServer({ dataDir: dir, args: ['--public-url', 'https://graph.example.com'] })
  t.teardown(() => server.stop())
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/, 'listening <bound address>')
  t.not(new URL(server.url).port, '0')
  t.match(server.output(), /^public url https:\/\/graph\.example\.com$/m)
})

t.test('credentials are printed for the shipped demo bootstrap only', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const own = await startServer({ dataDir: dir }) // the test fixture: an operator's file
  await own.stop()
  t.notMatch(own.output(), /demo-secret/, 'no secret from an operator file')
  t.notMatch(own.output(), /get a token/, 'no credentials line')
  const demo = await startServer({ dataDir: dir, args: ['--bootstrap', join(ROOT, 'bootstrap', 'demo.json')] })
  await demo.stop()
  t.match(demo.output(), /client demo-enricher \(tenant demo\), secret demo-secret/)
})

t.test('a bootstrap file the admin API would refuse stops the start with one line', async (t) => {
  const dir = tempDir()
  t.teardown(() => removeDir(dir))
  const file = join(dir, 'bootstrap.json')
  writeFileSync(file, JSON.stringify({ users: [{ username: 'u', password: 'abc', email: 'u@example.com' }] }))
  const e = await run([...serverArgs(dir), '--bootstrap', file])
  oneLineError(t, e, /^error: bootstrap file: users\[0\]\.password is not acceptable/)
  t.notMatch(e.stderr, /abc/)
})
