// The exclusive lock on a data directory, taken before anything in it is
// opened. Node has no flock, so the lock is a listening Unix socket: on Linux
// an abstract socket (the kernel frees the name when the process dies, even
// by kill -9, so a crashed server never blocks the next start, and taking it
// is atomic); elsewhere a socket file in the directory, removed when nobody
// answers on it. The abstract name holds the directory's device and inode and
// a random token kept in the directory (`lock-name`, 0600): abstract names
// have no permissions, and only who can read the directory may know, squat
// or impersonate the name. The holder answers a connection with one JSON
// line naming itself (what, pid, start time, URL once listening): that is how
// a second start names the holder and how the command-line tools find the
// running server.
import { randomBytes } from 'node:crypto'
import { existsSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { ConfigError } from '../config/load-config'

export interface LockHolder {
  /** What holds it: "the server" or a command's name. */
  what?: string
  pid: number
  since: string
  /** An address of the running server the tools can reach (the bound address), once it listens. */
  url?: string
}

export interface DataDirLock {
  /** Tells later askers where the server listens. */
  setUrl(url: string): void
  release(): void
}

/** The directory's lock token, made on first use (written aside, then linked: two first starts agree on one whole token). */
function lockToken(dir: string): string {
  const file = join(dir, 'lock-name')
  if (!existsSync(file)) {
    const aside = join(dir, `lock-name.${process.pid}.${randomBytes(4).toString('hex')}`)
    writeFileSync(aside, randomBytes(16).toString('hex'), { mode: 0o600 })
    try {
      linkSync(aside, file)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    } finally {
      unlinkSync(aside)
    }
  }
  return readFileSync(file, 'utf8').trim()
}

/** Linux: an abstract name (leading NUL); elsewhere a socket file in the directory. */
export function lockAddress(dir: string): string {
  if (process.platform !== 'linux') return join(dir, 'server.lock.sock')
  const st = statSync(dir)
  return `\0profile-graph-lock/${lockToken(dir)}/${st.dev}/${st.ino}`
}

function listenOn(address: string, holder: LockHolder): Promise<Server | 'in-use'> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => {})
      socket.end(JSON.stringify(holder) + '\n')
    })
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve('in-use')
      else reject(err)
    })
    server.listen(address, () => {
      // The lock must not keep a command-line tool alive.
      server.unref()
      resolve(server)
    })
  })
}

/** The holder's self-description, or undefined when nobody answers (a stale socket file). */
export function askHolder(address: string, timeoutMs = 5000): Promise<LockHolder | undefined> {
  return new Promise((resolve) => {
    let text = ''
    const socket = createConnection(address)
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ pid: 0, since: 'unknown' })
    }, timeoutMs)
    socket.on('data', (d: Buffer) => { text += d.toString() })
    socket.on('end', () => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(text) as LockHolder)
      } catch {
        resolve({ pid: 0, since: 'unknown' })
      }
    })
    socket.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      // Nobody listens on a socket file: its process is gone.
      resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? undefined : { pid: 0, since: 'unknown' })
    })
  })
}

/** For example `the server (process 1234, since 2026-..., listening http://127.0.0.1:8080)`. */
export function describeHolder(h: LockHolder): string {
  const details = [h.pid === 0 ? undefined : `process ${h.pid}`, `since ${h.since}`, h.url === undefined ? undefined : `listening ${h.url}`]
  return `${h.pid === 0 ? 'another process' : h.what ?? 'a process'} (${details.filter((d) => d !== undefined).join(', ')})`
}

/** Takes the lock, or tells who holds it. */
export async function tryLockDataDir(dir: string, what: string): Promise<DataDirLock | LockHolder> {
  const address = lockAddress(dir)
  const holder: LockHolder = { what, pid: process.pid, since: new Date().toISOString() }
  for (let attempt = 0; ; attempt++) {
    const got = await listenOn(address, holder)
    if (got !== 'in-use') {
      return {
        setUrl(url: string) { holder.url = url },
        release() { got.close() },
      }
    }
    const other = await askHolder(address)
    if (other !== undefined || attempt > 0 || process.platform === 'linux') return other ?? { pid: 0, since: 'unknown' }
    // A socket file left by a process that died: remove it once and try again.
    try {
      unlinkSync(address)
    } catch {
      // another starter removed it first
    }
  }
}

/** Takes the lock or stops the start with one line naming the holder. */
export async function lockDataDir(dir: string, what: string): Promise<DataDirLock> {
  const lock = await tryLockDataDir(dir, what)
  if ('release' in lock) return lock
  throw new ConfigError(`data directory ${dir} is in use by ${describeHolder(lock)}; stop it first`)
}
