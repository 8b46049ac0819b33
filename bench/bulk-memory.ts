// `node dist/bench/bulk-memory.js [--gb 2] [--ids 100000] [--line-bytes 2048]`:
// the server's memory while a bulk body of many gigabytes streams through one
// request. A warm-up writes every id once (caches and heaps at their working
// size); then the body streams with answers=errors and the server's private
// memory (anonymous RSS) is sampled every half second. Prints the warm-up's
// peak, the stream's peak and their difference against the goal (50 MB).
import { Readable } from 'node:stream'
import { request } from 'undici'
import { bulkLine } from './bulk-load'
import { cleanUpOnSignals, runCleanups } from './cleanup'
import { parseOrUsage } from './command-line'
import { TENANTS } from './fixture'
import { parseNumberFlags } from './options'
import { MemorySampler, readMemory } from './proc'
import { prepareService, startService, tempDir } from './service'
import { tenantCredentials } from './tokens'

const USAGE = `usage: node dist/bench/bulk-memory.js [--gb N] [--ids N] [--line-bytes N]
  --gb N           gigabytes streamed through the measured request (default 2)
  --ids N          distinct node ids the lines write, in turn (default 100000)
  --line-bytes N   the size of a line (default 2048)`
const GOAL_MB = 50
const LINES_PER_CHUNK = 64

type Options = { gb: number; ids: number; lineBytes: number }

function parse(argv: readonly string[]): Options {
  return parseNumberFlags(argv, USAGE, { gb: 2, ids: 100_000, lineBytes: 2048 }, {
    '--gb': { key: 'gb', max: 1024 },
    '--ids': { key: 'ids', max: 10_000_000, whole: true },
    '--line-bytes': { key: 'lineBytes', max: 1 << 20, whole: true },
  })
}

/** `count` put-node lines over `ids` ids, each padded to about `lineBytes`, made as they are read. */
function linesBody(consent: string, count: number, ids: number, lineBytes: number, sent: { bytes: number }): Readable {
  const filler = 'z'.repeat(Math.max(0, lineBytes - 150))
  const headers = { 'consent-reference': consent }
  let i = 0
  return new Readable({
    read() {
      if (i >= count) {
        this.push(null)
        return
      }
      let text = ''
      for (const end = Math.min(count, i + LINES_PER_CHUNK); i < end; i++) {
        text += bulkLine({ method: 'PUT', path: `nodes/core/customer/m${i % ids}`, headers, body: `{"name":"M${i}","notes":"${filler}"}` }, '')
      }
      sent.bytes += text.length
      this.push(text)
    },
  })
}

/** Streams the lines through one bulk request; returns its summary line. */
async function stream(origin: string, tenant: string, authorization: string, body: Readable): Promise<string> {
  const res = await request(`${origin}/graph/v1/${tenant}/bulk?answers=errors`, {
    method: 'POST', headers: { authorization, 'content-type': 'application/x-ndjson' }, body, headersTimeout: 0, bodyTimeout: 0,
  })
  const text = await res.body.text()
  if (res.statusCode !== 200) throw new Error(`bulk answered ${res.statusCode}: ${text.slice(0, 300)}`)
  const answers = text.trim().split('\n')
  // A failed line means the load is wrong, not the server's memory: say why and stop.
  if (answers.length > 1) throw new Error(`${answers.length - 1} lines failed, the first: ${answers[0]!.slice(0, 300)}`)
  return answers[0]!
}

async function main(): Promise<void> {
  const o = parseOrUsage(() => parse(process.argv.slice(2)))
  if (o === undefined) {
    process.exitCode = 2
    return
  }
  cleanUpOnSignals()
  const service = await startService(prepareService(tempDir('graph-bulk-memory-')), 2)
  const tenant = TENANTS[0]!
  const { headers } = await tenantCredentials(service.url, [tenant])
  const consent = headers[0]!.write['consent-reference']!
  const authorization = headers[0]!.read['authorization']!
  const memory = new MemorySampler(service.pid, 500)
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${line}\n`)
  }

  log(`warm-up: ${o.ids} ids, ${o.lineBytes} B lines`)
  const warmSent = { bytes: 0 }
  log(`warm-up done: ${await stream(service.url, tenant.id, authorization, linesBody(consent, o.ids, o.ids, o.lineBytes, warmSent))}`)
  const warmPeak = memory.newWindow()

  const count = Math.ceil(o.gb * 2 ** 30 / o.lineBytes)
  const sent = { bytes: 0 }
  const started = performance.now()
  const progress = setInterval(() => log(`${(sent.bytes / 2 ** 20).toFixed(0)} MB sent, private memory now ${readMemory(service.pid)?.rssAnonMb.toFixed(0) ?? '?'} MB`), 10_000)
  const summary = await stream(service.url, tenant.id, authorization, linesBody(consent, count, o.ids, o.lineBytes, sent))
  clearInterval(progress)
  const seconds = (performance.now() - started) / 1000
  const peak = memory.newWindow()
  memory.stop()
  const growth = peak - warmPeak
  const result = {
    streamedMb: Math.round(sent.bytes / 2 ** 20), lines: count, seconds: Math.round(seconds), linesPerSecond: Math.round(count / seconds), summary: JSON.parse(summary) as unknown,
    warmUpPeakMb: Math.round(warmPeak), streamPeakMb: Math.round(peak), growthMb: Math.round(growth), goalMb: GOAL_MB, withinGoal: growth <= GOAL_MB,
  }
  process.stdout.write(`${JSON.stringify(result)}\n`)
  await service.stop()
}

main().then(runCleanups, async (err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  await runCleanups()
  process.exitCode = 1
})
