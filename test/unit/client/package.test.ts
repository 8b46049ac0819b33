// The client package as a user installs it: the CommonJS and ESM builds
// both load through the package's exports, and the ESM build (what a
// browser bundle takes) imports nothing but its own files: no Node module.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../../helpers/server'

const PACKAGE = join(ROOT, 'packages', 'client')
const EXPORTS = ['ProfileGraphClient', 'ProfileGraphError', 'bulkLines', 'isLocked', 'isProfileGraphError', 'ClientCredentialsTokens']

const run = (args: string[]): string => execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' })

t.test('require() takes the CommonJS build, import the ESM build, with the same exports', async (t) => {
  const cjs = JSON.parse(run(['-e', 'const c = require("@profile-graph/client"); console.log(JSON.stringify({ keys: Object.keys(c).sort(), file: require.resolve("@profile-graph/client") }))'])) as { keys: string[]; file: string }
  const esm = JSON.parse(run(['--input-type=module', '-e', 'const c = await import("@profile-graph/client"); console.log(JSON.stringify({ keys: Object.keys(c).sort(), file: import.meta.resolve("@profile-graph/client") }))'])) as { keys: string[]; file: string }
  t.match(cjs.file, /packages\/client\/dist\/cjs\/index\.js$/)
  t.match(esm.file, /packages\/client\/dist\/esm\/index\.js$/)
  for (const name of EXPORTS) t.ok(cjs.keys.includes(name), `CommonJS exports ${name}`)
  t.same(esm.keys, cjs.keys, 'the same exports')
})

t.test('the ESM build imports only its own files, and the sources name no Node global', async (t) => {
  const dir = join(PACKAGE, 'dist', 'esm')
  const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'))
  t.ok(files.length >= 10, `${files.length} files`)
  for (const file of files) {
    const text = readFileSync(join(dir, file), 'utf8')
    const specifiers = [...text.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!)
    t.same(specifiers.filter((s) => !s.startsWith('./')), [], `${file}: relative imports only`)
    t.notMatch(text, /\b(?:require\(|process\.|Buffer\b|__dirname)/, `${file}: no Node global`)
  }
  const config = JSON.parse(readFileSync(join(PACKAGE, 'tsconfig.json'), 'utf8')) as { compilerOptions: { types: string[]; lib: string[] } }
  t.same(config.compilerOptions.types, [], 'compiled without Node types, so a Node-only API does not compile')
  t.ok(config.compilerOptions.lib.includes('DOM'), 'against the browser library')
})
