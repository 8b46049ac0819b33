// Start-up: every LMDB environment of the data directory is read to its end
// in a child process (workers/verify-lmdb.ts) before the server opens it, so
// that a damaged page refuses the start with the reason instead of killing
// the server (LMDB aborts or faults on such pages) or answering 404.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config/load-config'

const VERIFIER = join(__dirname, '..', '..', 'workers', 'verify-lmdb.js')

/** The LMDB environments of a data directory: the auth store and every shard. */
export function environmentsOf(dataDir: string): string[] {
  const dirs = [join(dataDir, 'auth')]
  const shards = join(dataDir, 'shards')
  if (existsSync(shards)) for (const s of readdirSync(shards)) dirs.push(join(shards, s))
  return dirs.filter((d) => existsSync(join(d, 'data.mdb')))
}

export async function verifyEnvironments(dirs: string[]): Promise<void> {
  if (dirs.length === 0) return
  const child = spawn(process.execPath, [VERIFIER, ...dirs], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (d: Buffer) => { out += d.toString() })
  child.stderr.on('data', (d: Buffer) => { out += d.toString() })
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])))
  if (code === 0) return
  const refused = /^refused (.*)$/m.exec(out)
  if (refused !== null) throw new ConfigError(refused[1]!)
  const checked = new Set([...out.matchAll(/^ok (.+)$/gm)].map((m) => m[1]!))
  const damaged = /^damaged (.+?): (.*)$/m.exec(out)
  const where = damaged?.[1] ?? dirs.find((d) => !checked.has(d)) ?? dirs[0]!
  const said = out.trim().split('\n').pop() ?? ''
  const why = damaged?.[2] ?? (signal !== null
    ? `reading its pages stopped the reader with ${signal}${said === '' ? '' : ` (${said})`}`
    : `the reader exited with ${String(code)}${said === '' ? '' : ` (${said})`}`)
  throw new ConfigError(`${join(where, 'data.mdb')} is damaged: ${why}; restore the data directory from a backup`)
}
