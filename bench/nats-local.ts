// Three JetStream nats-servers on this machine's loopback, routed into one
// cluster (bench/cluster.ts, bench/chaos.ts): free ports, config files and
// stores in the run's temp dir, stopped by the bench's cleanup however the
// run ends. One can be killed (kill -9) and started again on its store, for
// the chaos bench. The cluster tests use network namespaces instead
// (test/cluster/helpers); the bench needs no root and measures the same
// protocol on loopback.
import { spawn, type ChildProcess } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { request } from 'undici'
import { onCleanup } from './cleanup'
import { freePort } from './free-port'
import { sleep } from './wait'

export const NATS_SERVER_BIN = process.env['NATS_SERVER_BIN'] ?? '/usr/sbin/nats-server'

export interface LocalNatsServer {
  name: string
  url: string
  monitorUrl: string
  /** False between kill() and restart(). */
  running: boolean
}

export interface LocalNats {
  urls: string[]
  servers: readonly LocalNatsServer[]
  /** The JetStream meta leader's server name, as the first running server that answers /jsz sees it (undefined: none now). */
  metaLeader(): Promise<string | undefined>
  /** kill -9 of one server (a crash: its store stays). */
  kill(name: string): Promise<void>
  /** Starts a killed server again on its store and waits until the three agree on a meta leader. */
  restart(name: string): Promise<void>
  stop(): Promise<void>
}

interface Running {
  proc: ChildProcess
  ready: Promise<void>
  stop(): Promise<void>
  kill(): Promise<void>
}

function startOne(name: string, configFile: string): Running {
  const proc = spawn(NATS_SERVER_BIN, ['-c', configFile], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  const append = (d: Buffer): void => { out = (out + d.toString()).slice(-100_000) }
  proc.stdout!.on('data', append)
  proc.stderr!.on('data', append)
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()))
  const running = (): boolean => proc.exitCode === null && proc.signalCode === null
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
    if (running()) {
      proc.kill('SIGTERM')
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000)
      await exited
      clearTimeout(t)
    }
  }
  const kill = async (): Promise<void> => {
    if (running()) proc.kill('SIGKILL')
    await exited
  }
  return { proc, ready, stop, kill }
}

/** The meta leader as the server behind `monitor` sees it ('' when it knows none). */
async function metaLeaderSeenBy(monitor: string): Promise<string> {
  const res = await request(`${monitor}/jsz`, { headersTimeout: 2000, bodyTimeout: 2000 })
  return ((await res.body.json()) as { meta_cluster?: { leader?: string } }).meta_cluster?.leader ?? ''
}

/** Waits until every server's /jsz names the same meta leader. */
async function waitForMetaLeader(monitors: readonly string[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    try {
      const leaders = await Promise.all(monitors.map(metaLeaderSeenBy))
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
  const servers: LocalNatsServer[] = []
  const configs: string[] = []
  for (const [i, p] of ports.entries()) {
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
    servers.push({ name, url: `nats://127.0.0.1:${p.client}`, monitorUrl: `http://127.0.0.1:${p.monitor}`, running: true })
    configs.push(configFile)
  }
  // Replaced when a server is started again; the cleanup stops whichever runs.
  const procs = configs.map((c, i) => startOne(servers[i]!.name, c))
  const monitors = servers.map((s) => s.monitorUrl)
  const stop = async (): Promise<void> => { await Promise.all(procs.map((s) => s.stop())) }
  const forget = onCleanup(stop)
  try {
    await Promise.all(procs.map((s) => s.ready))
    await waitForMetaLeader(monitors)
  } catch (err) {
    await stop()
    throw err
  }
  const indexOf = (name: string): number => {
    const i = servers.findIndex((s) => s.name === name)
    if (i < 0) throw new Error(`no nats-server ${name}`)
    return i
  }
  return {
    urls: servers.map((s) => s.url),
    servers,
    async metaLeader() {
      for (const s of servers.filter((x) => x.running)) {
        try {
          const leader = await metaLeaderSeenBy(s.monitorUrl)
          if (leader !== '') return leader
        } catch {
          // this one does not answer now: ask the next
        }
      }
      return undefined
    },
    async kill(name) {
      const i = indexOf(name)
      servers[i]!.running = false
      await procs[i]!.kill()
    },
    async restart(name) {
      const i = indexOf(name)
      procs[i] = startOne(name, configs[i]!)
      await procs[i].ready
      servers[i]!.running = true
      await waitForMetaLeader(monitors, 60_000)
    },
    async stop() {
      forget()
      await stop()
    },
  }
}
