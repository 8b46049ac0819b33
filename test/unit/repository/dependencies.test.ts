// Every package the product's code imports is declared in package.json (not
// reached through npm's hoisting), and every installed package accepts the
// Node versions the product declares (no EBADENGINE at npm ci).
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { builtinModules } from 'node:module'
import { join, resolve } from 'node:path'

const ROOT = resolve(__dirname, '../../..')
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string }; dependencies: Record<string, string>; devDependencies: Record<string, string>; workspaces?: string[]
}
/** The packages of this repository's workspaces (packages/client): npm links them, nothing is fetched. */
const workspaces = new Set((pkg.workspaces ?? []).map((dir) => (JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string }).name))

function tsFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [])
}

/** The package a bare specifier names ("@scope/name/sub" -> "@scope/name"). */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0]!)) return undefined
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]
}

function importedPackages(files: string[]): Map<string, string> {
  const found = new Map<string, string>()
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8')
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*|^import\s+)'([^']+)'/gm)) {
      const name = /^[@a-z0-9][\w./@-]*$/i.test(m[1]!) ? packageOf(m[1]!) : undefined
      if (name !== undefined && !found.has(name)) found.set(name, file)
    }
  }
  return found
}

t.test('what src/, workers/ and bench/ import is a declared dependency', async (t) => {
  const imported = importedPackages([...tsFiles('src'), ...tsFiles('workers'), ...tsFiles('bench')])
  t.ok(imported.has('lmdb') && imported.has('@nats-io/nats-core'), 'the scan finds bare imports')
  for (const [name, file] of imported) t.ok(pkg.dependencies[name] !== undefined, `${name} (imported by ${file}) is in dependencies`)
})

t.test('what test/ imports is declared too, or is a workspace of this repository', async (t) => {
  t.ok(workspaces.has('@profile-graph/client'), 'the client package is a workspace')
  for (const [name, file] of importedPackages(tsFiles('test'))) {
    t.ok(pkg.dependencies[name] !== undefined || pkg.devDependencies[name] !== undefined || workspaces.has(name), `${name} (imported by ${file}) is declared`)
  }
})

type Version = [number, number, number]
const versionOf = (text: string): Version => {
  const [major = 0, minor = 0, patch = 0] = text.replace(/^v/, '').split('.').map((p) => (/^\d+$/.test(p) ? Number(p) : 0))
  return [major, minor, patch]
}
const compare = (a: Version, b: Version): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]

/** Whether a node-semver range accepts `version` (the comparators engines fields use: >=, >, <, <=, ^, ~, x-ranges, exact). */
export function accepts(range: string, version: Version): boolean {
  return range.split('||').some((alternative) => alternative.trim().replace(/([<>=^~]+)\s+/g, '$1').split(/\s+/).filter(Boolean).every((c) => {
    const m = /^([<>=^~]*)(.*)$/.exec(c)!
    const op = m[1]!
    const target = versionOf(m[2]!)
    const wild = m[2]!.split('.').length < 3 || /x|\*/i.test(m[2]!)
    const cmp = compare(version, target)
    if (m[2] === '*' || m[2] === '') return true
    switch (op) {
      case '>=': return cmp >= 0
      case '>': return cmp > 0
      case '<': return cmp < 0
      case '<=': return cmp <= 0
      case '^': return cmp >= 0 && version[0] === target[0]
      case '~': return cmp >= 0 && version[0] === target[0] && version[1] === target[1]
      default: return wild ? version[0] === target[0] : cmp === 0
    }
  }))
}

t.test('the range reader', async (t) => {
  t.ok(accepts('>= 18.x', [20, 12, 0]))
  t.notOk(accepts('>= 22.x', [20, 12, 0]))
  t.ok(accepts('^18.17.0 || >=20.5.0', [20, 12, 0]))
  t.notOk(accepts('^20.17.0 || >=22.9.0', [20, 12, 0]))
  t.ok(accepts('>=14', [20, 12, 0]))
  t.ok(accepts('20.x', [20, 12, 0]))
})

t.test('every installed package accepts the oldest Node the product declares', async (t) => {
  const oldest = versionOf(/(\d+(?:\.\d+){0,2})/.exec(pkg.engines.node)![1]!)
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } | string[]; dev?: boolean }> }
  const refusing: string[] = []
  for (const [path, entry] of Object.entries(lock.packages)) {
    const node = entry.engines !== undefined && !Array.isArray(entry.engines) ? entry.engines.node : undefined
    if (path !== '' && !entry.dev && node !== undefined && !accepts(node, oldest)) refusing.push(`${path} (${node})`)
  }
  t.same(refusing, [], `production packages that refuse Node ${oldest.join('.')}`)
})
