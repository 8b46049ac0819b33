// What /proc says about a child process: private memory (RssAnon: heap,
// stacks, buffers; the LMDB map is file-backed and shows as RssFile instead)
// and CPU time. Sampled on a timer, so the peak is the peak of the samples.
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { sleep } from './wait'

export interface MemorySample {
  rssAnonMb: number
  rssFileMb: number
}

function clockTicks(): number {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return Number.isFinite(n) && n > 0 ? n : 100
  } catch {
    return 100
  }
}
const TICKS = clockTicks()

export function readMemory(pid: number): MemorySample | undefined {
  let text: string
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8')
  } catch {
    return undefined
  }
  const kb = (field: string): number => {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)
    return m === null ? 0 : Number(m[1])
  }
  return { rssAnonMb: kb('RssAnon') / 1024, rssFileMb: kb('RssFile') / 1024 }
}

/**
 * User + system CPU seconds of the process (all its threads), or of one of its
 * threads when `tid` is given: Node's main thread (the service's front thread,
 * where every request passes) has the process's own id as its thread id.
 */
export function readCpuSeconds(pid: number, tid?: number): number {
  try {
    const stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return 0
  }
}

/**
 * Bytes the process passed to write calls so far (/proc/<pid>/io wchar:
 * LMDB's page writes at commit, journal records, logs); undefined where it
 * is not readable. (Its write_bytes is no measure of disk traffic: a kernel
 * with large folios counts a whole folio for each page a write dirties.)
 */
export function readWrittenBytes(pid: number): number | undefined {
  try {
    const m = /^wchar:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))
    return m === null ? undefined : Number(m[1])
  } catch {
    return undefined
  }
}

/**
 * Bytes written so far to the block device that holds `dir`, by anything on
 * the machine (/sys/dev/block/<major>:<minor>/stat, sectors of 512 bytes);
 * undefined where the device has no stat file (a tmpfs, say).
 */
export function readDeviceWrittenBytes(dir: string): number | undefined {
  try {
    const dev = statSync(dir).dev
    const major = Math.floor(dev / 256) & 0xfff
    const minor = (dev & 0xff) | (Math.floor(dev / 4096) & ~0xff)
    const fields = readFileSync(`/sys/dev/block/${major}:${minor}/stat`, 'utf8').trim().split(/\s+/)
    const sectors = Number(fields[6])
    return Number.isFinite(sectors) ? sectors * 512 : undefined
  } catch {
    return undefined
  }
}

/** Samples one process's memory; keeps the peak of the whole run and of the current window. */
export class MemorySampler {
  peakAnonMb = 0
  peakFileMb = 0
  windowPeakAnonMb = 0
  private readonly timer: NodeJS.Timeout

  constructor(private readonly pid: number, intervalMs = 200) {
    this.timer = setInterval(() => this.sample(), intervalMs)
    this.timer.unref()
    this.sample()
  }

  sample(): void {
    const m = readMemory(this.pid)
    if (m === undefined) return
    this.peakAnonMb = Math.max(this.peakAnonMb, m.rssAnonMb)
    this.peakFileMb = Math.max(this.peakFileMb, m.rssFileMb)
    this.windowPeakAnonMb = Math.max(this.windowPeakAnonMb, m.rssAnonMb)
  }

  /** Starts a new window (a scenario); returns the peak of the one that ends. */
  newWindow(): number {
    this.sample()
    const peak = this.windowPeakAnonMb
    this.windowPeakAnonMb = 0
    return peak
  }

  stop(): void {
    clearInterval(this.timer)
  }
}

/** CPU used by a process (or one of its threads) between two calls, in cores (1.0 = one core busy). */
export class CpuMeter {
  private cpu0 = 0
  private t0 = 0
  /** CPU seconds between the last start() and stop(). */
  seconds = 0

  constructor(private readonly pid: number, private readonly tid?: number) {}

  start(): void {
    this.cpu0 = readCpuSeconds(this.pid, this.tid)
    this.t0 = performance.now()
  }

  stop(): number {
    const wall = (performance.now() - this.t0) / 1000
    this.seconds = readCpuSeconds(this.pid, this.tid) - this.cpu0
    return wall <= 0 ? 0 : this.seconds / wall
  }
}

/** CPU seconds of each thread of a process, by thread id. */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const out = new Map<number, number>()
  let tids: string[] = []
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return out
  }
  for (const tid of tids) out.set(Number(tid), readCpuSeconds(pid, Number(tid)))
  return out
}

/**
 * The busiest thread other than the main one between two threadCpuSeconds
 * samples, in cores: with one tenant, the shard actor that owns its shard.
 */
export function busiestOtherThreadCores(pid: number, before: Map<number, number>, after: Map<number, number>, wallSeconds: number): number {
  let most = 0
  for (const [tid, cpu] of after) if (tid !== pid) most = Math.max(most, cpu - (before.get(tid) ?? 0))
  return wallSeconds > 0 ? most / wallSeconds : 0
}

/** CPU microseconds per request: the front thread's budget. NaN without requests. */
export function cpuMicrosPerRequest(cpuSeconds: number, requests: number): number {
  return requests > 0 ? (cpuSeconds * 1e6) / requests : Number.NaN
}

/** Busy CPU seconds of the whole machine (all processes), from /proc/stat. */
export function readMachineBusySeconds(): number {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!
    const [, user, nice, system, , , irq, softirq, steal] = first.trim().split(/\s+/).map(Number)
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / TICKS
  } catch {
    return 0
  }
}

/** Busy cores of the whole machine between start() and stop(). */
export class MachineCpuMeter {
  private busy0 = 0
  private t0 = 0

  start(): void {
    this.busy0 = readMachineBusySeconds()
    this.t0 = performance.now()
  }

  stop(): number {
    const seconds = (performance.now() - this.t0) / 1000
    return seconds <= 0 ? 0 : (readMachineBusySeconds() - this.busy0) / seconds
  }
}

export function readLoadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')
  } catch {
    return 'unknown'
  }
}

/** Bytes the files under `dir` occupy on disk (allocated blocks, so sparse files count what they use). */
export function diskBytes(dir: string): number {
  let bytes = 0
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else bytes += statSync(p).blocks * 512
    }
  }
  try {
    walk(dir)
  } catch {
    return 0
  }
  return bytes
}

/**
 * Waits until the machine is quiet (busy below `maxCores` over a 500 ms
 * sample, while the bench itself is idle), for at most `maxWaitMs`.
 * Returns whether it became quiet.
 */
export async function waitForQuiet(maxCores: number, maxWaitMs: number): Promise<boolean> {
  const end = performance.now() + maxWaitMs
  const meter = new MachineCpuMeter()
  for (;;) {
    meter.start()
    await sleep(500)
    if (meter.stop() < maxCores) return true
    if (performance.now() >= end) return false
  }
}
