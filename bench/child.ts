// Starts a node entry as a child process and waits for its `listening <url>`
// line; stops it with SIGTERM (SIGKILL after a timeout). The bench and the
// tests (test/helpers/server.ts) both start the server through here.
import { spawn, type ChildProcess } from 'node:child_process'
import { onCleanup } from './cleanup'

export interface Child {
  url: string
  pid: number
  proc: ChildProcess
  output(): string
  /** What it wrote to stderr alone (trimmed like output()). */
  errors(): string
  /** SIGTERM, then SIGKILL if it has not exited within 15 s. */
  stop(): Promise<void>
  /** SIGKILL at once (a crash, for fault tests). */
  kill(): Promise<void>
}

export interface ChildOptions {
  /** Node's own flags (--cpu-prof ...), before the entry. */
  nodeArgs?: readonly string[]
  /** The child's environment (default: this process's). */
  env?: NodeJS.ProcessEnv
  startTimeoutMs?: number
  /** Keep only about the last this many characters of output (a loaded server's access log would fill memory). */
  keepOutputChars?: number
  /** A command the node process runs under: valgrind and its options (bench/log-cost.ts), or `ip netns exec <name>`, which execs it so the pid stays node's (test/cluster). */
  wrapper?: readonly string[]
}

/** The last ~`keep` characters of what a stream wrote. */
class Tail {
  text = ''
  constructor(private readonly keep: number) {}
  add(d: Buffer): void {
    this.text += d.toString()
    if (this.text.length > 2 * this.keep) this.text = this.text.slice(-this.keep)
  }
}

export async function startChild(label: string, entry: string, args: readonly string[], options: ChildOptions = {}): Promise<Child> {
  const startTimeoutMs = options.startTimeoutMs ?? 60_000
  const command = [...(options.wrapper ?? []), process.execPath, ...(options.nodeArgs ?? []), entry, ...args]
  const proc: ChildProcess = spawn(command[0]!, command.slice(1), { env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] })
  const keep = options.keepOutputChars ?? Infinity
  const all = new Tail(keep)
  const errors = new Tail(keep)
  proc.stdout!.on('data', (d: Buffer) => all.add(d))
  proc.stderr!.on('data', (d: Buffer) => { all.add(d); errors.add(d) })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null
  const forget = onCleanup(() => stop())
  async function stop(): Promise<void> {
    forget()
    if (!running()) return
    proc.kill('SIGTERM')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
    await exited
    clearTimeout(timer)
  }
  async function kill(): Promise<void> {
    forget()
    if (running()) proc.kill('SIGKILL')
    await exited
  }
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL')
      reject(new Error(`${label} did not print "listening <url>" within ${startTimeoutMs} ms:\n${all.text}`))
    }, startTimeoutMs)
    const onData = (): void => {
      const m = /^listening (\S+)$/m.exec(all.text)
      if (m === null) return
      clearTimeout(timer)
      proc.stdout!.off('data', onData)
      resolve(m[1]!)
    }
    proc.stdout!.on('data', onData)
    proc.once('exit', (code, signal) => {
      clearTimeout(timer)
      forget()
      reject(new Error(`${label} exited (${code ?? signal}) before listening:\n${all.text}`))
    })
  })
  return { url, pid: proc.pid!, proc, output: () => all.text, errors: () => errors.text, stop, kill }
}
