// Starts a node entry as a child process and waits for its `listening <url>`
// line; stops it with SIGTERM (SIGKILL after a timeout).
import { spawn, type ChildProcess } from 'node:child_process'
import { onCleanup } from './cleanup'

export interface Child {
  url: string
  pid: number
  output(): string
  stop(): Promise<void>
}

export async function startChild(
  label: string, entry: string, args: readonly string[], nodeArgs: readonly string[] = [], startTimeoutMs = 60_000,
): Promise<Child> {
  const proc: ChildProcess = spawn(process.execPath, [...nodeArgs, entry, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  proc.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  proc.stderr!.on('data', (d: Buffer) => { out += d.toString() })
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const forget = onCleanup(() => stop())
  async function stop(): Promise<void> {
    forget()
    if (proc.exitCode !== null || proc.signalCode !== null) return
    proc.kill('SIGTERM')
    const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000)
    await exited
    clearTimeout(timer)
  }
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL')
      reject(new Error(`${label} did not print "listening <url>" within ${startTimeoutMs} ms:\n${out}`))
    }, startTimeoutMs)
    const onData = (): void => {
      const m = /^listening (\S+)$/m.exec(out)
      if (m === null) return
      clearTimeout(timer)
      proc.stdout!.off('data', onData)
      resolve(m[1]!)
    }
    proc.stdout!.on('data', onData)
    proc.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`${label} exited (${code ?? signal}) before listening:\n${out}`))
    })
  })
  return { url, pid: proc.pid!, output: () => out, stop }
}
