// Three JetStream nats-servers on this machine's loopback, routed into one
// cluster (bench/cluster.ts): free ports, config files and stores in the
// run's temp dir, stopped by the bench's cleanup however the run ends. The
// cluster tests use network namespaces instead (test/cluster/helpers); the
// bench needs no root and measures the same protocol on loopback.
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { onCleanup } from './cleanup'
import { freePort } from './free-port'
import { sleep } from './wait'

export const NATS_SERVER_BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server'

export interface LocalNats {
  urls: string[]
  pids: number[]
  stop(): Promise<void>
}

function startOne(name: string, configFile: string): { proc: ChildProcess; ready: Promise<void>; stop(): Promise<void> } {
  const proc = spawn(NATS_SERVER_BIN, ['-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const append = (d: Buffer): void => { out = (out + d.toString()).slice(-100_000) }
  proc.stdout!.on('data', append)
  proc.stderr!.on('data', append)
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (/Server is ready/.test(out)) {
        clearInterval(timer)
        resolve()
      }
    }, 50)
    proc.once('exit', (code, signal) => {
      clearInterval(timer)
      reject(new Error(`${name} exited (${code ?? signal}):\n${out}`))
    })
  })
  ready.catch(() => undefined)
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(t)
    }
  }
  return { proc, ready, stop }
}

/** Waits until every server's /jsz names the same meta leader. */
async function waitForMetaLeader(monitors: readonly string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      const leaders = await Promise.all(monitors.map(async (m) => {
        const res = await request(`${m}/jsz`, { headersTimeout: 2000, bodyTimeout: 2000 })
        return ((await res.body.json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader ?? ''
      }))
      if (new Set(leaders).size === 1 && leaders[0] !== '') return
    } catch {
      // not up yet
    }
    await sleep(250)
  }
  throw new Error(`the three nats-servers formed no JetStream cluster within ${timeoutMs} ms`)
}

/** Starts three routed servers; `dir` holds their configs and stores. */
export async function startLocalNats(dir: string): Promise<LocalNats> {
  const ports = await Promise.all([1, 2, 3].map(async () => ({ client: await freePort(), route: await freePort(), monitor: await freePort() })))
  const servers = ports.map((p, i) => {
    const name = `bench-nats${i + 1}`
    const routes = ports.filter((_, j) => j !== i).map((o) => `"nats://127.0.0.1:${o.route}"`).join(', ')
    const configFile = join(dir, `${name}.conf`)
    writeFileSync(configFile, [
      `server_name: ${name}`, `listen: "127.0.0.1:${p.client}"`, `http: "127.0.0.1:${p.monitor}"`,
      // As in docs/manual/cluster.md: a forwarded write carries its body.
      'max_payload: 8MB',
      `jetstream { store_dir: "${join(dir, name)}" }`,
      `cluster { name: bench, listen: "127.0.0.1:${p.route}", routes: [${routes}] }`, '',
    ].join('\n'))
    return startOne(name, configFile)
  })
  const stop = async (): Promise<void> => { await Promise.all(servers.map((s) => s.stop())) }
  const forget = onCleanup(stop)
  try {
    await Promise.all(servers.map((s) => s.ready))
    await waitForMetaLeader(ports.map((p) => `http://127.0.0.1:${p.monitor}`))
  } catch (err) {
    await stop()
    throw err
  }
  return {
    urls: ports.map((p) => `nats://127.0.0.1:${p.client}`),
    pids: servers.map((s) => s.proc.pid!),
    async stop() {
      forget()
      await stop()
    },
  }
}
