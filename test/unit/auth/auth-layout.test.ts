// The authorization service's layout: endpoints/, models/, helpers/, and
// only the models touch the auth store's tables. A file outside models/
// that reaches a table (`s.authStore.users.get`, `store.clients`, an LMDB
// call such as `.getRange(` or `.env.transaction(`) fails this test.
import t from 'tap'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

import { PASSWORD_WORKER } from '../../../src/auth/helpers/password-hasher'
import { SIGNING_WORKER } from '../../../src/auth/helpers/signing-pool'

const ROOT = join(__dirname, '..', '..', '..')
const AUTH = join(ROOT, 'src', 'auth')

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e)
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : []
  })
}

/** The table names of the AuthStore interface (models/auth-store.ts), and its environment. */
function tableNames(): string[] {
  const text = readFileSync(join(AUTH, 'models', 'auth-store.ts'), 'utf8')
  const body = /export interface AuthStore \{([\s\S]*?)\n\}/.exec(text)?.[1] ?? ''
  return [...body.matchAll(/^\s+(\w+): (?:Root)?Database\b/gm)].map((m) => m[1]!)
}

/** What reaches the store's tables: a table (or env) off a store, an LMDB call, an lmdb import. */
export function rawAccess(source: string, tables: readonly string[]): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
  const rules = [
    new RegExp(`\\b\\w*[sS]tore\\??\\.(?:${tables.join('|')})\\b`, 'g'),
    /\.(?:getRange|getKeys|getValues|getMany|putSync|removeSync|transaction|transactionSync|ifNoExists|ifVersion|committed|flushed)\b/g,
    /from\s+['"]lmdb['"]/g,
  ]
  return rules.flatMap((r) => [...code.matchAll(r)].map((m) => m[0]))
}

t.test('the rule knows the tables and catches the old ways in', async (t) => {
  const tables = tableNames()
  for (const name of ['env', 'users', 'usernames', 'clients', 'codes', 'tenants', 'subscriptions', 'signingKeys']) t.ok(tables.includes(name), name)
  t.ok(rawAccess('const u = s.authStore.users.get(id)', tables).length > 0)
  t.ok(rawAccess('await s.authStore.env.transaction(() => {})', tables).length > 0)
  t.ok(rawAccess('const c = store.clients.get(id)', tables).length > 0)
  t.ok(rawAccess('const id = this.store.usernames.get(name)', tables).length > 0)
  t.ok(rawAccess('for (const { value } of db(s).getRange()) {}', tables).length > 0)
  t.ok(rawAccess("import type { Database } from 'lmdb'", tables).length > 0)
  t.same(rawAccess('const u = s.oauth.users.find(id) // store.users.get in a comment', tables), [])
})

t.test('no file under src/auth outside models/ touches the tables', async (t) => {
  const tables = tableNames()
  for (const file of tsFiles(AUTH)) {
    const rel = relative(AUTH, file)
    if (rel.startsWith('models/')) continue
    t.same(rawAccess(readFileSync(file, 'utf8'), tables), [], `src/auth/${rel}`)
  }
})

t.test('src/auth is endpoints/, models/ and helpers/ beside the route table, the OAuth services and what handlers are handed (services.ts)', async (t) => {
  const top = readdirSync(AUTH).sort()
  t.same(top, ['endpoints', 'federation', 'helpers', 'models', 'oauth-services.ts', 'route-types.ts', 'routes.ts', 'services.ts'])
  const models = readdirSync(join(AUTH, 'models'))
  for (const m of ['users', 'clients', 'tenants', 'subscriptions', 'packages', 'roles', 'authorization-codes', 'access-tokens', 'refresh-tokens', 'sessions', 'lockout', 'signing-keys']) {
    t.ok(models.includes(`${m}.ts`), `models/${m}.ts`)
  }
})

t.test('models/ and helpers/ never import an endpoint', async (t) => {
  for (const file of tsFiles(AUTH)) {
    const rel = relative(AUTH, file)
    if (rel.startsWith('endpoints/') || !rel.includes('/')) continue
    const up = [...readFileSync(file, 'utf8').matchAll(/from '([^']+)'/g)].map((m) => m[1]!).filter((spec) => spec.includes('endpoints/'))
    t.same(up, [], `src/auth/${rel}`)
  }
})

t.test('the username index is written in one place (models/users.ts)', async (t) => {
  const writers = tsFiles(AUTH).filter((f) => /usernames\s*\.\s*(?:put|remove)/.test(readFileSync(f, 'utf8'))).map((f) => relative(AUTH, f))
  t.same(writers, ['models/users.ts'])
})

t.test('the pools name their worker files from where the helpers now live', async (t) => {
  // Run from the sources here, the same relative path reaches the .ts beside the compiled .js.
  for (const worker of [PASSWORD_WORKER, SIGNING_WORKER]) t.ok(existsSync(worker.replace(/\.js$/, '.ts')), relative(ROOT, worker))
})
