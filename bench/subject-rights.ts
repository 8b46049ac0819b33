// `node dist/bench/subject-rights.js [--elements 10000] [--consents 100] [--rounds 3]`:
// a data subject's export and erasure against their goals. One subject owns
// `elements` elements under one consent (nodes and the relations between
// them, half each, written through the bulk endpoint); their export is read
// to the last byte, as NDJSON and as JSON, while the server's private memory
// is sampled. Another subject has `consents` consents, each with a node;
// DELETE subject is timed until its 204. Prints one JSON line; the goals:
// export under 2 s with flat memory, erasure within 5 s.
import { request } from 'undici'
import { bulkLine } from './bulk-load'
import { cleanUpOnSignals, runCleanups } from './cleanup'
import { parseOrUsage } from './command-line'
import { TENANTS, consentsPath } from './fixture'
import { parseNumberFlags } from './options'
import { MemorySampler, readMemory } from './proc'
import { prepareService, startService, tempDir } from './service'
import { tenantCredentials } from './tokens'

const USAGE = `usage: node dist/bench/subject-rights.js [--elements N] [--consents N] [--rounds N]
  --elements N   elements of the exported subject, half nodes, half relations (default 10000)
  --consents N   consents of the erased subject, one node each (default 100)
  --rounds N     exports of each media type, and erasures (default 3; the median is reported)`
const EXPORT_GOAL_S = 2
const ERASE_GOAL_S = 5
/** "Flat": the export's peak over the memory before it, in MB. */
const FLAT_MB = 50

type Options = { elements: number; consents: number; rounds: number }

function parse(argv: readonly string[]): Options {
  return parseNumberFlags(argv, USAGE, { elements: 10_000, consents: 100, rounds: 3 }, {
    '--elements': { key: 'elements', max: 10_000_000, whole: true },
    '--consents': { key: 'consents', max: 100_000, whole: true },
    '--rounds': { key: 'rounds', max: 100, whole: true },
  })
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

async function send(method: 'GET' | 'POST' | 'DELETE', url: string, headers: Record<string, string>, body?: string): Promise<{ status: number; text: string; bytes: number }> {
  const res = await request(url, { method, headers, body, headersTimeout: 0, bodyTimeout: 0 })
  let bytes = 0
  let text = ''
  // Read to the end without keeping an export whole: only its first bytes, for an error message.
  for await (const chunk of res.body) {
    bytes += (chunk as Buffer).length
    if (text.length < 300) text += (chunk as Buffer).toString('utf8', 0, 300)
  }
  return { status: res.statusCode, text, bytes }
}

/** Writes `lines` through one bulk request; every line must succeed. */
async function bulk(base: string, authorization: string, lines: string[]): Promise<void> {
  const r = await send('POST', `${base}/bulk?answers=errors`, { authorization, 'content-type': 'application/x-ndjson' }, lines.join(''))
  if (r.status !== 200 || !r.text.startsWith('{"done"')) throw new Error(`bulk load failed: ${r.status} ${r.text}`)
}

async function consent(origin: string, tenant: string, authorization: string, subject: string): Promise<string> {
  const r = await send('POST', `${origin}${consentsPath(tenant)}`, { authorization, 'content-type': 'application/json' }, JSON.stringify({ subject }))
  if (r.status !== 201) throw new Error(`consent for ${subject}: ${r.status} ${r.text}`)
  return (JSON.parse(r.text) as { consentReference: string }).consentReference
}

async function main(): Promise<void> {
  const o = parseOrUsage(() => parse(process.argv.slice(2)))
  if (o === undefined) {
    process.exitCode = 2
    return
  }
  cleanUpOnSignals()
  const service = await startService(prepareService(tempDir('graph-subject-rights-')), 2)
  const tenant = TENANTS[0]!
  const { headers } = await tenantCredentials(service.url, [tenant])
  const authorization = headers[0]!.write['authorization']!
  const base = `${service.url}/graph/v1/${tenant.id}`
  const log = (line: string): void => { process.stderr.write(`${new Date().toISOString()} ${line}\n`) }

  // The exported subject: nodes, and a relation from each to the next.
  const exported = await consent(service.url, tenant.id, authorization, 'bench-export-subject')
  const nodes = Math.ceil(o.elements / 2)
  const lineHeaders = { 'consent-reference': exported }
  const lines: string[] = []
  for (let i = 0; i < nodes; i++) {
    lines.push(bulkLine({ method: 'PUT', path: `nodes/core/customer/s${i}`, headers: lineHeaders, body: `{"name":"Subject ${i}","city":"Walldorf","segment":"gold"}` }, ''))
  }
  for (let i = 0; i < o.elements - nodes; i++) {
    lines.push(bulkLine({ method: 'PUT', path: `relations/core/customer/s${i}/core/customer/s${(i + 1) % nodes}/core/knows/k${i}`, headers: lineHeaders, body: '{"since":2020}' }, ''))
  }
  log(`writing ${o.elements} elements of one subject`)
  await bulk(base, authorization, lines)

  const memory = new MemorySampler(service.pid, 100)
  const exports: Record<string, { seconds: number[]; bytes: number; peakOverBeforeMb: number[] }> = {}
  for (const accept of ['application/x-ndjson', 'application/json']) {
    const entry = { seconds: [] as number[], bytes: 0, peakOverBeforeMb: [] as number[] }
    for (let round = 0; round < o.rounds; round++) {
      memory.newWindow()
      const before = readMemory(service.pid)?.rssAnonMb ?? 0
      const started = performance.now()
      const r = await send('GET', `${base}/subject/export?subject=bench-export-subject`, { authorization, accept })
      entry.seconds.push((performance.now() - started) / 1000)
      entry.peakOverBeforeMb.push(memory.newWindow() - before)
      if (r.status !== 200) throw new Error(`export answered ${r.status}: ${r.text}`)
      entry.bytes = r.bytes
    }
    exports[accept] = entry
    log(`export as ${accept}: ${entry.seconds.map((s) => s.toFixed(2)).join(', ')} s, ${(entry.bytes / 2 ** 20).toFixed(1)} MB`)
  }
  memory.stop()

  const erasures: number[] = []
  for (let round = 0; round < o.rounds; round++) {
    const subject = `bench-erased-subject-${round}`
    const refs: string[] = []
    for (let i = 0; i < o.consents; i++) refs.push(await consent(service.url, tenant.id, authorization, subject))
    await bulk(base, authorization, refs.map((ref, i) => bulkLine({ method: 'PUT', path: `nodes/core/customer/e${round}-${i}`, headers: { 'consent-reference': ref }, body: `{"name":"Erased ${i}"}` }, '')))
    const started = performance.now()
    const r = await send('DELETE', `${base}/subject?subject=${subject}`, { authorization })
    if (r.status !== 204) throw new Error(`erasure answered ${r.status}: ${r.text}`)
    erasures.push((performance.now() - started) / 1000)
    log(`erasure of ${o.consents} consents: ${erasures[round]!.toFixed(2)} s`)
  }

  const summary = Object.fromEntries(Object.entries(exports).map(([accept, e]) => [accept, {
    medianSeconds: Number(median(e.seconds).toFixed(3)), bytes: e.bytes, medianPeakOverBeforeMb: Math.round(median(e.peakOverBeforeMb)),
    withinGoal: median(e.seconds) < EXPORT_GOAL_S && median(e.peakOverBeforeMb) <= FLAT_MB,
  }]))
  const erase = { consents: o.consents, medianSeconds: Number(median(erasures).toFixed(3)), withinGoal: median(erasures) <= ERASE_GOAL_S }
  process.stdout.write(`${JSON.stringify({ elements: o.elements, rounds: o.rounds, export: summary, exportGoalSeconds: EXPORT_GOAL_S, flatMb: FLAT_MB, erase, eraseGoalSeconds: ERASE_GOAL_S })}\n`)
  await service.stop()
}

main().then(runCleanups, async (err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
  await runCleanups()
  process.exitCode = 1
})
