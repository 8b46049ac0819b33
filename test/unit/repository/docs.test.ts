// Keeps the mechanical parts of README.md and docs/ true of the code: the
// options list is generated from src/config/load-config.ts, the error tables
// are src/core/errors.ts, every option a document names exists, every
// repository path a document names exists, and every relative link (with its
// #anchor) leads somewhere. No issue numbers or commit hashes:
// test/unit/repository/no-issue-refs.test.ts.
import t from 'tap'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ApiError, ERROR_TYPES, type ErrorType } from '../../../src/core/errors'
import { OPTIONS, loadConfig } from '../../../src/config/load-config'
import { optionsDoc, optionsDocPath } from '../../../src/config/options-doc'

const ROOT = resolve(__dirname, '..', '..', '..')
const DOCS = join(ROOT, 'docs')
const MANUAL = join(DOCS, 'manual')
const DESIGN = join(DOCS, 'design')
const read = (p: string): string => readFileSync(p, 'utf8')

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return markdownUnder(path)
    return e.name.endsWith('.md') ? [path] : []
  })
}

/** README.md and every document under docs/. */
const docFiles = [join(ROOT, 'README.md'), ...markdownUnder(DOCS)]
const manualFiles = markdownUnder(MANUAL)

/** Text outside fenced code blocks. */
const prose = (markdown: string): string => markdown.replace(/^```[\s\S]*?^```/gm, '')

t.test('docs/ holds the index, the manual and the design documents', async (t) => {
  t.ok(existsSync(join(DOCS, 'README.md')), 'docs/README.md')
  for (const name of ['options.md', 'graph-api.md', 'authorization.md', 'events.md', 'operations.md', 'backup-and-restore.md', 'tenant-transfer.md', 'cluster.md', 'errors.md']) {
    t.ok(existsSync(join(MANUAL, name)), `manual/${name}`)
  }
  for (const name of ['architecture.md', 'data-protection.md', 'disk-format.md', 'contracts.md', 'replication.md', 'performance.md']) {
    t.ok(existsSync(join(DESIGN, name)), `design/${name}`)
  }
  t.same(readdirSync(DOCS).filter((f) => f.endsWith('.md')), ['README.md'], 'every other document is in manual/ or design/')
  const readme = read(join(ROOT, 'README.md'))
  t.match(readme, /\]\(docs\/README\.md/, 'the README points at docs/')
  t.ok(readme.split('\n').length <= 300, 'the README stays short')
  const firstScreen = readme.split('\n').slice(0, 40).join('\n')
  t.match(firstScreen, 'npm ci && npm run build', 'the install and build command is on the first screen')
  t.match(firstScreen, /^npm test\b/m, 'the test command is on the first screen')
})

t.test('docs/manual/options.md is the one options table, as generated (npm run docs:options)', async (t) => {
  t.equal(read(optionsDocPath(ROOT)), optionsDoc())
  for (const spec of Object.values(OPTIONS)) t.match(optionsDoc(), `\`${spec.flag}\` | \`${spec.env}\``, spec.flag)
})

/** The rows `| `type` | status | meaning |` of a document. */
function errorTypeRows(markdown: string): { type: string; status: number; meaning: string }[] {
  return [...markdown.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)].map(([, type, status, meaning]) => ({ type: type!, status: Number(status), meaning: meaning! }))
}

t.test('the error types of docs/manual/errors.md are src/core/errors.ts: every type, its status and meaning, in order', async (t) => {
  const actual = (Object.keys(ERROR_TYPES) as ErrorType[]).map((type) => ({
    type, status: new ApiError(type, '').status, meaning: ERROR_TYPES[type],
  }))
  t.strictSame(errorTypeRows(read(join(MANUAL, 'errors.md'))), actual)
})

t.test('every condition of docs/manual/errors.md names a real type with its status', async (t) => {
  const rows = [...read(join(MANUAL, 'errors.md')).matchAll(/^\| [^`|][^|]* \| (\d{3})[^|]* \| `([a-z_]+)`[^|]* \|$/gm)]
  t.ok(rows.length >= 15, `found the conditions table (${rows.length} rows)`)
  for (const [line, status, type] of rows) {
    t.ok(type! in ERROR_TYPES, `${type} is a type of src/core/errors.ts`)
    if (type! in ERROR_TYPES) t.equal(new ApiError(type as ErrorType, '').status, Number(status), line!.slice(0, 80))
  }
})

t.test('contracts.md names every option of src/config/load-config.ts as flag and variable, and each pair means the same', async (t) => {
  const options = Object.values(OPTIONS).filter((o) => !('tool' in o))
  const contracts = read(join(DESIGN, 'contracts.md'))
  for (const { flag, env } of options) t.ok(contracts.includes(`\`${flag}\`/\`${env}\``), `${flag}/${env}`)
  for (const [, flag, env] of contracts.matchAll(/`(--[a-z-]+)`\/`([A-Z_]+)`/g)) {
    t.ok(Object.values(OPTIONS).some((o) => o.flag === flag && o.env === env), `${flag}/${env} is a pair of the loader`)
  }
  // One pair taken through the loader: the flag and the variable set the same field.
  t.strictSame(loadConfig(['--max-body', '77'], {}).maxBody, loadConfig([], { MAX_BODY: '77' }).maxBody)
})

t.test('the layer table of docs/design/architecture.md is LAYERS of test/unit/repository/layers.test.ts, bottom first', async (t) => {
  const source = read(join(ROOT, 'test', 'unit', 'repository', 'layers.test.ts'))
  const block = /const LAYERS: string\[\]\[\] = \[([\s\S]*?)\n\]/.exec(source)![1]!
  const layers = [...block.matchAll(/^ {2}\[(.*)\],?$/gm)].map(([, units]) => [...units!.matchAll(/'([^']+)'/g)].map(([, u]) => u!))
  t.ok(layers.length >= 10, `found LAYERS (${layers.length} layers)`)
  const rows = [...read(join(DESIGN, 'architecture.md')).matchAll(/^\| (\d+) \| (.+) \|$/gm)]
  const documented = rows.map(([, , units]) => [...units!.matchAll(/`([^`]+)`/g)].map(([, u]) => u!.replace(/\.ts$/, '')))
  t.strictSame(documented, layers)
})

/** Flags the manual may name that are not options of the loader: --help, and the bench's own. */
const COMMAND_FLAGS = new Set(['--help', '--quick', '--scale'])

t.test('every --flag the README and the manual name is an option or a documented command flag', async (t) => {
  const known = new Set<string>([...Object.values(OPTIONS).map((o) => o.flag), ...COMMAND_FLAGS])
  for (const file of [join(ROOT, 'README.md'), ...manualFiles]) {
    const named = new Set([...read(file).matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*)/g)].map(([, flag]) => flag!))
    for (const flag of named) t.ok(known.has(flag), `${relative(ROOT, file)}: ${flag}`)
  }
})

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>()
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(heading!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'))
  }
  return out
}

t.test('every relative link of the README and docs/ leads to a file (and heading) that exists', async (t) => {
  for (const file of docFiles) {
    const text = prose(read(file))
    for (const [, target, anchor] of text.matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue
      const path = target === '' ? file : resolve(dirname(file), target!)
      const where = `${relative(ROOT, file)} -> ${target}${anchor === undefined ? '' : `#${anchor}`}`
      // The specifications live beside the repository (../shared/spec), not in it: checked only where present.
      if (relative(ROOT, path).startsWith('..') && !existsSync(dirname(path))) continue
      t.ok(existsSync(path), where)
      if (anchor !== undefined && path.endsWith('.md') && existsSync(path)) t.ok(anchors(read(path)).has(anchor), `${where}: heading exists`)
    }
  }
})

t.test('every repository path the README and docs/ name exists', async (t) => {
  for (const file of docFiles) {
    for (const [, path] of read(file).matchAll(/`((?:src|workers|test|bench|bootstrap|docs)\/[\w./-]+\.(?:ts|json|md))`/g)) {
      t.ok(existsSync(join(ROOT, path!)), `${relative(ROOT, file)}: ${path}`)
    }
  }
})
