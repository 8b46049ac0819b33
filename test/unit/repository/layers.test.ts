// The layers of src/ and workers/ (docs/design/architecture.md): every relative
// import must point to a lower layer, so no layer knows its users and no two
// folders import each other. A folder is one unit, its part (src/auth/admin
// belongs to src/auth); a file at the top of src/ or workers/ (the entry
// points) is a unit of its own.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = resolve(__dirname, '../../..')

/** Bottom first; a unit may import only units of a lower layer. */
const LAYERS: string[][] = [
  // logs, metrics, request ids and the stderr guard; what everything uses: the error table, the clock,
  // telling a full disk from a bug; addresses; the metamodel
  ['src/telemetry', 'src/core', 'src/net', 'src/model'],
  // the one config loader and cluster mode's options
  ['src/config'],
  // the one schema compiler (TypeBox + ajv): the edge, the bootstrap file and the admin API validate with it
  ['src/schema'],
  // the contract between the two threads (messages, codec, key encoding, URLs); key files and the shred log;
  // the bootstrap file
  ['src/contract', 'src/crypto', 'src/bootstrap'],
  // the generic HTTP edge; the crypto the workers run; a shard's journal (records, segments, the file layer
  // a power-loss test stands in for)
  ['src/http', 'workers/crypto', 'workers/journal'],
  // the front side of the actors; the shard store
  ['src/shards', 'workers/store'],
  // what the actors and the fronts share of cluster mode: the replica, the stream log, effects, leases, placement
  ['src/replication'],
  // event logs and webhook delivery; the actor's parts; backups and restores (below the auth service, whose
  // admin API takes one)
  ['src/events', 'workers/actor', 'src/backups'],
  ['src/auth'],
  // what a start checks and opens; the services
  ['src/start', 'src/graph', 'src/gateway'],
  // health, metrics and request labels: they read every service; the operator's commands
  ['src/operations', 'src/commands'],
  // cluster mode's front side: leases seen, requests forwarded to owners; the old command entry points
  ['src/cluster', 'src/backup', 'src/export-tenant', 'src/import-tenant', 'src/rotate-master-key', 'src/rotate-signing-key'],
  // the thread entry points
  ['workers/shard-actor', 'workers/verify-lmdb', 'workers/rekey-shards'],
  // HTTP composition: the server, the request lifecycle, the services handed to the routes, the API description
  ['src/app'],
  ['src/main'],
]

/** What the worker threads may take from src/: the shared, low-level units (src/telemetry for traces: an actor exports its own spans). */
const SHARED_WITH_WORKERS = new Set(['src/core', 'src/config', 'src/net', 'src/contract', 'src/model', 'src/crypto', 'src/replication', 'src/telemetry'])
/** What src/ may take from workers/: the crypto modules the front thread runs too (and the backup copier both threads use), and the journal's files (a stopped server's backup reads whether they hold records). */
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

t.test('the root of src/ holds only the server entry and the old command entry points; every other file is in its part', async (t) => {
  const root = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name).sort()
  t.same(root, ['backup.ts', 'export-tenant.ts', 'import-tenant.ts', 'main.ts', 'rotate-master-key.ts', 'rotate-signing-key.ts'])
  for (const shim of root.filter((name) => name !== 'main.ts')) {
    const code = readFileSync(join(ROOT, 'src', shim), 'utf8').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('//'))
    t.same(code, [`import './commands/${shim.replace(/\.ts$/, '')}'`], `${shim} only runs its command`)
  }
})
