// Keeps the mechanical parts of docs/ true of the code: the error table is
// src/core/errors.ts, every option of src/config/load-config.ts is named with its variable,
// every repository path a document names exists, and every relative link
// (with its #anchor) leads somewhere.
import t from 'tap'
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { ApiError, ERROR_TYPES, type ErrorType } from '../../src/core/errors'
import { loadConfig } from '../../src/config/load-config'

const ROOT = resolve(__dirname, '..', '..')
const DOCS = join(ROOT, 'docs')
const docFiles = readdirSync(DOCS).filter((f) => f.endsWith('.md')).map((f) => join(DOCS, f))
const read = (p: string): string => readFileSync(p, 'utf8')

t.test('docs/ holds the index and the four design documents', async (t) => {
  for (const name of ['README.md', 'architecture.md', 'data-protection.md', 'contracts.md', 'disk-format.md']) {
    t.ok(existsSync(join(DOCS, name)), name)
  }
  t.match(read(join(ROOT, 'README.md')), /\]\(docs\/README\.md\)/, 'the README points at docs/')
})

t.test('the error table of contracts.md is src/core/errors.ts: every type, its status and meaning, in order', async (t) => {
  const rows = [...read(join(DOCS, 'contracts.md')).matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (.+) \|$/gm)]
  const documented = rows.map(([, type, status, meaning]) => ({ type, status: Number(status), meaning }))
  const actual = (Object.keys(ERROR_TYPES) as ErrorType[]).map((type) => ({
    type, status: new ApiError(type, '').status, meaning: ERROR_TYPES[type],
  }))
  t.strictSame(documented, actual)
})

t.test('contracts.md names every option of src/config/load-config.ts as flag and variable, and each pair means the same', async (t) => {
  const source = read(join(ROOT, 'src', 'config', 'load-config.ts'))
  const options = [...source.matchAll(/\{ flag: '(--[a-z-]+)', env: '([A-Z_]+)' \}/g)].map(([, flag, env]) => ({ flag: flag!, env: env! }))
  t.ok(options.length >= 17, `found the OPTIONS table (${options.length} options)`)
  const contracts = read(join(DOCS, 'contracts.md'))
  for (const { flag, env } of options) t.ok(contracts.includes(`\`${flag}\`/\`${env}\``), `${flag}/${env}`)
  const documented = [...contracts.matchAll(/`(--[a-z-]+)`\/`([A-Z_]+)`/g)]
  t.equal(documented.length, options.length, 'no option documented that the loader does not know')
  for (const [, flag, env] of documented) {
    t.ok(options.some((o) => o.flag === flag && o.env === env), `${flag}/${env} is a pair of the loader`)
  }
  // One pair taken through the loader: the flag and the variable set the same field.
  t.strictSame(loadConfig(['--max-body', '77'], {}).maxBody, loadConfig([], { MAX_BODY: '77' }).maxBody)
})

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>()
  for (const [, heading] of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    out.add(heading!.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-'))
  }
  return out
}

t.test('every relative link of docs/ leads to a file (and heading) that exists', async (t) => {
  for (const file of docFiles) {
    const text = read(file)
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

t.test('every repository path docs/ names exists', async (t) => {
  for (const file of docFiles) {
    for (const [, path] of read(file).matchAll(/`((?:src|workers|test|bench|bootstrap)\/[\w./-]+\.(?:ts|json|md))`/g)) {
      t.ok(existsSync(join(ROOT, path!)), `${relative(ROOT, file)}: ${path}`)
    }
  }
})
