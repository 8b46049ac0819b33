// One local JetStream nats-server (Debian's /usr/sbin/nats-server) on a free
// port with a temporary store directory, for in-process and single-machine
// cluster-mode tests; stopped and its directory removed on teardown (also
// when the test process ends early, through bench/cleanup.ts).
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { onCleanup } from '../../bench/cleanup'
import { freePort } from '../../bench/free-port'

export const NATS_SERVER_BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server'

export interface NatsServer {
  /** nats://127.0.0.1:<port> */
  url: string
  port: number
  storeDir: string
  proc: ChildProcess
  output(): string
  /** SIGTERM (SIGKILL after 10 s), then removes the store directory. */
  stop(): Promise<void>
}

/** True when the nats-server binary is installed (tests skip with a message otherwise). */
export const natsServerAvailable = (): boolean => existsSync(NATS_SERVER_BIN)

export { freePort }

export async function startNatsServer(options: { startTimeoutMs?: number } = {}): Promise<NatsServer> {
  const port = await freePort()
  const storeDir = mkdtempSync(join(tmpdir(), 'nats-test-'))
  const proc = spawn(NATS_SERVER_BIN, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const append = (d: Buffer): void => { out += d.toString() }
  proc.stdout!.on('data', append)
  proc.stderr!.on('data', append)
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null
  const forget = onCleanup(() => stop())
  async function stop(): Promise<void> {
    forget()
    if (running()) {
      proc.kill('SIGTERM')
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    }
    rmSync(storeDir, { recursive: true, force: true })
  }
  const timeoutMs = options.startTimeoutMs ?? 15_000
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop().then(() => reject(new Error(`nats-server was not ready within ${timeoutMs} ms:\n${out}`)))
    }, timeoutMs)
    const check = (): void => {
      if (!/Server is ready/.test(out)) return
      clearTimeout(timer)
      proc.stderr!.off('data', check)
      proc.stdout!.off('data', check)
      resolve()
    }
    proc.stderr!.on('data', check)
    proc.stdout!.on('data', check)
    proc.once('exit', (code, signal) => {
      clearTimeout(timer)
      void stop().then(() => reject(new Error(`nats-server exited (${code ?? signal}) before ready:\n${out}`)))
    })
  })
  return { url: `nats://127.0.0.1:${port}`, port, storeDir, proc, output: () => out, stop }
}
