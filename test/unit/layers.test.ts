// The layers of src/ and workers/ (README, "Architecture"): every relative
// import must point to a lower layer, so no layer knows its users and no two
// folders import each other. A folder is one unit (src/auth/admin belongs to
// src/auth); a file at the top of src/ or workers/ is a unit of its own.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = resolve(__dirname, '../..')

/** Bottom first; a unit may import only units of a lower layer. */
const LAYERS: string[][] = [
  // the log's line sink (batched writes to stderr) and the request id (a stem and a counter); the stderr
  // guard (descriptor 2 made a FIFO) and what its relay makes of foreign lines
  ['src/line-sink', 'src/request-id', 'src/stderr-guard', 'src/stderr-lines'],
  // the access line's encoding; the guard's start and the relay process
  ['src/access-line', 'src/start-stderr-guard', 'src/stderr-relay'],
  // the ring the front thread hands log lines through, and the log's thread that writes them
  ['src/log-ring'],
  ['src/log-worker'],
  // the one log, then the metrics registry (which reports the log's dropped lines)
  ['src/log'],
  ['src/metrics'],
  // what everything uses: the error table, the clock, addresses, the metamodel
  ['src/errors', 'src/clock', 'src/storage-failure', 'src/net', 'src/model'],
  // the config loader; the contract between the two threads (messages, codec, key encoding, URLs)
  ['src/contract'],
  // (the config loader returns cluster mode's options, which the contract defines)
  ['src/config'],
  ['src/crypto', 'src/lifecycle'],
  // the one schema compiler (TypeBox + ajv): the edge, the bootstrap file and the admin API validate with it
  ['src/schema'],
  // the generic HTTP edge; the bootstrap file; the crypto the workers run
  ['src/front', 'src/bootstrap', 'workers/crypto'],
  // a shard's journal: records, segments, the file layer a power-loss test stands in for
  ['workers/journal'],
  // the front side of the actors; the shard store
  ['src/shard', 'workers/store'],
  // what the actors and the fronts share of cluster mode: the lease bucket, its lease values and placement
  ['src/replication'],
  // event logs and webhook delivery; the actor's parts
  ['src/events', 'workers/actor'],
  // backups and restores (below the auth service, whose admin API takes one)
  ['src/backups'],
  ['src/auth'],
  ['src/graph', 'src/gateway'],
  // health, metrics and request labels: they read every service
  ['src/operations'],
  // cluster mode's front side: leases seen, requests forwarded to owners
  ['src/cluster'],
  // composition at the root
  ['src/services'],
  // the routes of both services and the API description they yield
  ['src/openapi'],
  ['src/cors-policy'],
  ['src/dispatch', 'src/data-dir', 'src/lmdb-check', 'src/publish-subscription-events', 'workers/shard-actor', 'workers/verify-lmdb'],
  ['src/server'],
  ['src/main', 'src/rotate-signing-key'],
  ['src/backup'],
  ['src/export-tenant'],
  ['src/import-tenant'],
  ['src/rotate-master-key'],
  ['workers/rekey-shards'],
]

/** What the worker threads may take from src/: the shared, low-level units. */
const SHARED_WITH_WORKERS = new Set(['src/errors', 'src/clock', 'src/storage-failure', 'src/config', 'src/contract', 'src/model', 'src/crypto', 'src/replication'])
/** What src/ may take from workers/: the crypto modules the front thread runs too, and the journal's files (a stopped server's backup reads whether they hold records). */
const SHARED_WITH_SRC = new Set(['workers/crypto', 'workers/journal'])

const rank = new Map<string, number>()
LAYERS.forEach((units, i) => { for (const u of units) rank.set(u, i) })

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = `${dir}/${e.name}`
    if (e.isDirectory()) return tsFiles(path)
    return e.name.endsWith('.ts') ? [path] : []
  })
}

/** src/auth/admin/users.ts -> src/auth; src/main.ts -> src/main */
function unitOf(path: string): string {
  const parts = path.replace(/\.(ts|js)$/, '').split('/')
  return parts.slice(0, 2).join('/')
}

const IMPORT = /(?:\bfrom|\bimport|\brequire)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g

interface Edge { file: string; from: string; to: string }

function edges(): Edge[] {
  const out: Edge[] = []
  for (const file of [...tsFiles('src'), ...tsFiles('workers')]) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    for (const m of text.matchAll(IMPORT)) {
      const target = relative(ROOT, resolve(ROOT, dirname(file), m[1]!))
      const from = unitOf(file)
      const to = unitOf(target)
      if (from !== to) out.push({ file, from, to })
    }
  }
  return out
}

t.test('every unit of src/ and workers/ has a layer', async (t) => {
  const units = new Set([...tsFiles('src'), ...tsFiles('workers')].map(unitOf))
  t.same([...units].filter((u) => !rank.has(u)), [], 'units missing from LAYERS')
})

t.test('no import runs to the same or a higher layer', async (t) => {
  const all = edges()
  t.ok(all.length > 50, 'the imports were found')
  const upward = all.filter((e) => (rank.get(e.to) ?? Infinity) >= (rank.get(e.from) ?? -1))
  t.same(upward.map((e) => `${e.file} -> ${e.to}`), [])
})

t.test('no two units import each other', async (t) => {
  const pairs = new Set(edges().map((e) => `${e.from} -> ${e.to}`))
  const mutual = [...pairs].filter((p) => pairs.has(p.split(' -> ').reverse().join(' -> ')))
  t.same(mutual, [])
})

t.test('the threads share only the low-level units', async (t) => {
  const crossing = edges().filter((e) => {
    const fromWorkers = e.from.startsWith('workers/')
    const toWorkers = e.to.startsWith('workers/')
    if (fromWorkers && !toWorkers) return !SHARED_WITH_WORKERS.has(e.to)
    if (!fromWorkers && toWorkers) return !SHARED_WITH_SRC.has(e.to)
    return false
  })
  t.same(crossing.map((e) => `${e.file} -> ${e.to}`), [])
})
