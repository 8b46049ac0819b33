// One command line (package.json `bin`): `profile-graph <command>` runs the
// same program as each entry point, lists its commands, refuses unknown ones,
// and gives each command's options under its own name.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { accessSync, constants, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { startChild } from '../../bench/child'
import { ROOT, tempDir } from '../helpers/server'

const CLI = join(ROOT, 'dist', 'src', 'commands', 'cli.js')
const COMMANDS = ['serve', 'backup', 'export-tenant', 'import-tenant', 'rotate-master-key', 'rotate-signing-key']
const cli = (...args: string[]): ReturnType<typeof spawnSync> => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 })

t.test('package.json names the command line, and the built file runs as a program', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin?: Record<string, string> }
  t.same(pkg.bin, { 'profile-graph': 'dist/src/commands/cli.js' })
  t.match(readFileSync(CLI, 'utf8'), /^#!\/usr\/bin\/env node\n/, 'a shebang line')
  t.doesNotThrow(() => accessSync(CLI, constants.X_OK), 'executable')
})

t.test('without a command, or with --help, it lists every command', async (t) => {
  for (const args of [[], ['--help']]) {
    const r = cli(...args)
    t.equal(r.status, 0)
    for (const c of COMMANDS) t.match(r.stdout, new RegExp(`^  ${c} `, 'm'), `${JSON.stringify(args)} lists ${c}`)
  }
})

t.test('an unknown command is refused with exit code 2 and the list', async (t) => {
  const r = cli('restart')
  t.equal(r.status, 2)
  t.match(r.stderr, /^error: unknown command "restart"/)
  t.match(r.stderr, /usage: profile-graph <command>/)
  t.equal(cli('__proto__').status, 2, 'a name Object.prototype has is unknown too')
})

t.test("each command's --help lists its options under its own name", async (t) => {
  for (const c of COMMANDS) {
    const r = cli(c, '--help')
    t.equal(r.status, 0, `${c} --help`)
    t.match(r.stdout, new RegExp(`^usage: profile-graph ${c} \\[options\\]`), `${c}: its name`)
    t.match(r.stdout, /--data-dir <value>/, `${c}: its options`)
  }
})

t.test('serve runs the server; a bad option is the same start error as from main.js', async (t) => {
  const dir = tempDir('cli-')
  const server = await startChild('server', CLI, ['serve', '--port', '0', '--workers', '1', '--data-dir', join(dir, 'data'), '--master-key-file', join(dir, 'master.key')], { startTimeoutMs: 120_000 })
  t.teardown(async () => {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const res = await fetch(`${server.url}/health/ready`)
  t.equal(res.status, 200, 'ready')
  const bad = cli('serve', '--port', 'eighty')
  t.equal(bad.status, 1)
  t.match(bad.stderr, /--port/, 'names the option')
})
