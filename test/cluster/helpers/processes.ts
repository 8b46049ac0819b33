// A program started inside a namespace whose pid the test can signal:
// kill -9, SIGSTOP and SIGCONT, as the failure scenarios need.
import { spawn, type ChildProcess } from 'node:child_process'

export interface Started {
  pid: number
  proc: ChildProcess
  output(): string
  /** SIGKILL at once (a crash). */
  kill(): Promise<void>
  /** SIGSTOP: paused, its sockets open. */
  pause(): void
  /** SIGCONT. */
  resume(): void
  /** SIGTERM (after SIGCONT, a paused process could not act on it), SIGKILL after 10 s. */
  stop(): Promise<void>
}

/** Signals for a running child; `exited` resolves when it has exited. */
export function controls(proc: ChildProcess): Pick<Started, 'kill' | 'pause' | 'resume' | 'stop'> {
  const exited = new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve()
    else proc.once('exit', () => resolve())
  })
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null
  return {
    async kill() {
      if (running()) proc.kill('SIGKILL')
      await exited
    },
    pause() {
      if (running()) proc.kill('SIGSTOP')
    },
    resume() {
      if (running()) proc.kill('SIGCONT')
    },
    async stop() {
      if (running()) {
        proc.kill('SIGCONT')
        proc.kill('SIGTERM')
      }
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Starts `command` and waits until its output matches `ready`. */
export async function startProcess(label: string, command: readonly string[], ready: RegExp, timeoutMs = 30_000): Promise<Started> {
  const proc = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const append = (d: Buffer): void => {
    out += d.toString()
    if (out.length > 400_000) out = out.slice(-200_000)
  }
  proc.stdout!.on('data', append)
  proc.stderr!.on('data', append)
  const started: Started = { pid: proc.pid!, proc, output: () => out, ...controls(proc) }
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (ready.test(out)) done()
    }, 50)
    const deadline = setTimeout(() => done(new Error(`${label} was not ready within ${timeoutMs} ms:\n${out}`)), timeoutMs)
    const onExit = (code: number | null, signal: string | null): void => done(new Error(`${label} exited (${code ?? signal}) before it was ready:\n${out}`))
    proc.once('exit', onExit)
    function done(err?: Error): void {
      clearInterval(timer)
      clearTimeout(deadline)
      proc.off('exit', onExit)
      if (err === undefined) resolve()
      else {
        proc.kill('SIGKILL')
        reject(err)
      }
    }
  })
  return started
}
