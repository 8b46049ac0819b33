// Moving a tenant between installations (docs/design/contracts.md, *Tenant export
// and import*): export from one server with the command, import into another,
// and the second holds the same graph, sealed under its own keys; a consent
// revoked before the export stays revoked, its data locked, and no plaintext
// of it is in the export file. The import command also streams a file of
// bulk write lines (--operations) and names the lines that failed.
import t from 'tap'
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Graph, createConsent } from '../helpers/client'
import { ROOT, getToken, removeDir, serverForTest, startServer, tempDir, type Server } from '../helpers/server'
import { until } from '../../bench/wait'

const run = promisify(execFile)
const EXPORT = join(ROOT, 'dist', 'src', 'export-tenant.js')
const IMPORT = join(ROOT, 'dist', 'src', 'import-tenant.js')
const CLIENT = { ADMIN_CLIENT_ID: 'demo-enricher', ADMIN_CLIENT_SECRET: 'demo-secret' }
const REVOKED_MARKER = 'Revoked Person 7731'

async function serverFor(t: { teardown(fn: () => Promise<void>): void }): Promise<Server> {
  const server = await startServer()
  t.teardown(async () => {
    await server.stop()
    removeDir(server.dataDir)
  })
  return server
}

interface More {
  args?: string[]
  env?: Record<string, string>
  /** What standard input holds (the file when none is named). */
  stdin?: string
}

/** Runs a tenant command on `file` (standard input when undefined). */
function tool(entry: string, server: { url: string }, file: string | undefined, more: More = {}): Promise<{ stdout: string; stderr: string }> {
  const args = [entry, '--tenant', 'demo', ...(file === undefined ? [] : ['--file', file]), '--server-url', server.url, ...(more.args ?? [])]
  const running = run(process.execPath, args, { env: { ...process.env, ...CLIENT, ...more.env } })
  running.child.stdin?.end(more.stdin ?? '')
  return running
}

/** The exit code and output of a command that may fail. */
async function outcome(running: Promise<{ stdout: string; stderr: string }>): Promise<{ code: number; stdout: string; stderr: string }> {
  return await running.then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (err: Error & { code: number; stdout: string; stderr: string }) => ({ code: err.code, stdout: err.stdout, stderr: err.stderr }))
}

t.test('a tenant exported from one server and imported into another is the same graph', async (t) => {
  const files = tempDir('transfer-')
  t.teardown(() => removeDir(files))
  const source = await serverFor(t)
  const token = await getToken(source.url)
  const kept = await createConsent(source.url, 'demo', token, 'keeps')
  const g = new Graph(source.url, 'demo', token, kept)
  for (let i = 0; i < 40; i++) t.equal((await g.put(`nodes/core/customer/c${i}`, { name: `Customer ${i}`, age: 20 + i }, {})).status, 204)
  t.equal((await g.put('nodes/core/product/p1', { title: 'Tea', price: 3.5 })).status, 204)
  t.equal((await g.put('relations/core/customer/c1/core/product/p1/core/viewed/v1', { views: 2 })).status, 204)
  t.equal((await g.post('counters/core/customer/c1/core/product/p1/core/viewed/v1/views')).status, 200)
  t.equal((await g.put('relations/core/customer/c1/core/customer/c2/core/knows/k1', { since: 2020 })).status, 204)
  const revoked = await createConsent(source.url, 'demo', token, 'forgets')
  const gone = new Graph(source.url, 'demo', token, revoked)
  t.equal((await gone.put('nodes/core/customer/forget-me', { name: REVOKED_MARKER })).status, 204)
  t.equal((await gone.delete(`consents/${revoked}`)).status, 204)

  const file = join(files, 'demo.ndjson')
  const exported = await tool(EXPORT, source, file)
  t.match(exported.stderr, /^exported \d+ lines \(metamodel 1, consent 2, node 42, relation 2\) in [\d.]+ s, \d+ lines\/s$/m, 'progress: counts and rate')
  t.equal(statSync(file).mode & 0o777, 0o600, 'the export file is for its owner only')
  const text = readFileSync(file, 'utf8')
  t.notOk(text.includes(REVOKED_MARKER), 'no plaintext of the revoked consent is in the export')
  const lines = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)
  t.match(lines.find((l) => l.ref === revoked), { kind: 'consent', status: 'revoked', client: 'demo-enricher', changed: Number }, 'with the client that made it and its last change, which the import keeps')
  t.same(lines.find((l) => (l.node as { id?: string } | undefined)?.id === 'forget-me'), {
    kind: 'node', node: { ns: 'core', type: 'customer', id: 'forget-me' }, created: lines.find((l) => (l.node as { id?: string } | undefined)?.id === 'forget-me')!.created,
    createdBy: 'demo-enricher', owner: revoked, locked: true,
  }, 'its node is exported locked, without properties')

  const target = await serverFor(t)
  const imported = await tool(IMPORT, target, file)
  t.match(imported.stdout, /^imported: 46 added, 0 already there$/m)
  t.match(imported.stderr, /^imported 47 lines \(metamodel 1, consent 2, node 42, relation 2\) in /m)
  const again = await tool(IMPORT, target, file)
  t.match(again.stdout, /^imported: 0 added, 46 already there$/m, 'importing again changes nothing')

  // Who took the tenant out in plaintext, and who put it in: one line per export and per import batch.
  const audits = (server: Server, action: string): Record<string, unknown>[] => server.errors().split('\n').filter((l) => l.startsWith('{') && l.includes(`"audit":"${action}"`)).map((l) => JSON.parse(l) as Record<string, unknown>)
  await until('the export audited', () => audits(source, 'tenant.export').length === 1)
  t.match(audits(source, 'tenant.export')[0], { level: 30, client: 'demo-enricher', tenant: 'demo', requestId: String, msg: 'audit tenant.export' })
  await until('the imports audited', () => audits(target, 'tenant.import').length === 2)
  t.match(audits(target, 'tenant.import'), [{ client: 'demo-enricher', tenant: 'demo', lines: 46, requestId: String }, { client: 'demo-enricher', tenant: 'demo', lines: 46 }])

  const copy = join(files, 'demo-again.ndjson')
  await tool(EXPORT, target, copy)
  t.equal(readFileSync(copy, 'utf8'), text, 'the target exports exactly what the source did')

  const token2 = await getToken(target.url)
  const g2 = new Graph(target.url, 'demo', token2, kept)
  t.match((await g2.get('nodes/core/customer/c7')).json(), { name: 'Customer 7', age: 27, 'consent-reference': kept })
  t.match((await g2.get('relations/core/customer/c1/core/product/p1/core/viewed/v1')).json(), { views: 3 })
  const found = (await g2.get('nodes/core/customer?q=name:"Customer 9"')).json<{ id: string }[]>()
  t.same(found.map((n) => n.id), ['c9'], 'imported data is indexed for search under the target\'s keys')
  const locked = await new Graph(target.url, 'demo', token2, revoked).get('nodes/core/customer/forget-me')
  t.equal(locked.status, 403, 'the revoked consent\'s data stays locked')
  t.equal(locked.json<{ type: string }>().type, 'consent_revoked')
  t.equal((await g2.put('nodes/core/customer/c7', { age: 28 })).status, 204, 'the kept consent writes on the target')
  t.equal((await g2.get('nodes/core/customer/c7')).json<{ age: number }>().age, 28)
})

t.test('an import whose lines name an unknown consent is refused whole', async (t) => {
  const files = tempDir('transfer-')
  t.teardown(() => removeDir(files))
  const target = await serverFor(t)
  const file = join(files, 'bad.ndjson')
  const node = { kind: 'node', node: { ns: 'core', type: 'customer', id: 'x' }, created: 1, createdBy: 'c', owner: 'cr_unknown', properties: { name: 'X' } }
  writeFileSync(file, `${JSON.stringify(node)}\n`)
  const refused = await tool(IMPORT, target, file).then(() => '', (err: Error & { stderr: string }) => err.stderr)
  t.match(refused, /^error: POST .*\/graph\/v1\/demo\/import answered 400: import refused: node owned by consent "cr_unknown", which is neither here nor earlier in the import\n$/)

  const refusedLine = async (line: unknown): Promise<string> => {
    writeFileSync(file, `${JSON.stringify(line)}\n`)
    return await tool(IMPORT, target, file).then(() => '', (err: Error & { stderr: string }) => err.stderr)
  }
  t.match(await refusedLine({ ...node, node: { ns: 'core', type: 'undeclared', id: 'x' } }), /answered 400: node type core\/undeclared is not declared in the metamodel/, 'types are checked as a write checks them')
  t.match(await refusedLine({ kind: 'consent', ref: 'cr_guessable', subject: 's', status: 'granted', revokedProperties: [], created: 1 }), /answered 400: import line 1: "ref" must be a consent reference as this service makes them/, 'no guessable consent reference comes in')
})

t.test('--operations streams bulk write lines: the good ones are applied, the failed ones named by line', async (t) => {
  const files = tempDir('operations-')
  t.teardown(() => removeDir(files))
  const { server, consent, graph } = await serverForTest(t)
  const put = (path: string, body: unknown): string => JSON.stringify({ method: 'PUT', path, headers: { 'consent-reference': consent }, body })
  const operations = async (lines: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const file = join(files, 'operations.ndjson')
    writeFileSync(file, `${lines.join('\n')}\n`)
    return await outcome(tool(IMPORT, server, file, { args: ['--operations'] }))
  }

  t.test('a failed line fails the command, not the lines around it', async (t) => {
    const r = await operations([
      put('nodes/core/customer/op1', { name: 'Op One' }),
      put('nodes/core/product/op-p1', { title: 'Tea', price: 3.5 }),
      '{"method":"PUT","path":',
      put('relations/core/customer/op1/core/product/op-p1/core/viewed/v1', { views: 2 }),
      '',
      JSON.stringify({ method: 'GET', path: 'nodes/core/customer/op1' }),
      put('nodes/core/customer/op2', { name: 'Op Two' }),
    ])
    t.equal(r.code, 1)
    t.match(r.stderr, /^line 3: 400 \S.*\nline 6: 405 GET .* is not a write a bulk request may carry .*\n$/, 'each failed line, numbered as in the file (blank lines counted)')
    t.equal(r.stdout, 'imported: 4 operations, 2 failed\n')
    t.match((await graph.get('nodes/core/customer/op1')).json(), { name: 'Op One', 'consent-reference': consent })
    t.match((await graph.get('nodes/core/customer/op2')).json(), { name: 'Op Two' })
    t.match((await graph.get('relations/core/customer/op1/core/product/op-p1/core/viewed/v1')).json(), { views: 2 })
  })

  t.test('all lines applied: exit code 0', async (t) => {
    const r = await operations([put('nodes/core/customer/op3', { name: 'Op Three' }), put('nodes/core/customer/op1', { age: 41 })])
    t.same(r, { code: 0, stdout: 'imported: 2 operations, 0 failed\n', stderr: '' })
    t.match((await graph.get('nodes/core/customer/op1')).json(), { name: 'Op One', age: 41 })
  })

  t.test('from standard input; IMPORT_OPERATIONS=true is the flag', async (t) => {
    const stdin = `${put('nodes/core/customer/op4', { name: 'Op Four' })}\n`
    t.same(await outcome(tool(IMPORT, server, undefined, { args: ['--operations'], stdin })), { code: 0, stdout: 'imported: 1 operations, 0 failed\n', stderr: '' })
    t.match((await graph.get('nodes/core/customer/op4')).json(), { name: 'Op Four' })
    const r = await outcome(tool(IMPORT, server, undefined, { env: { IMPORT_OPERATIONS: 'true' }, stdin: put('nodes/core/customer/op4', { age: 4 }) }))
    t.same(r, { code: 0, stdout: 'imported: 1 operations, 0 failed\n', stderr: '' }, 'a last line without its newline counts too')
    t.match((await graph.get('nodes/core/customer/op4')).json(), { name: 'Op Four', age: 4 })
  })

  t.test('a refusal of the whole request is one line', async (t) => {
    const r = await operations(['not json', 'nor this'])
    t.equal(r.code, 1)
    t.match(r.stderr, /^error: POST .*\/graph\/v1\/demo\/bulk\?answers=errors answered 400: the body is not NDJSON .*line \d+: [^\n]*\n$/)
    t.equal(r.stdout, '')
    const missing = await outcome(tool(IMPORT, server, join(files, 'missing.ndjson'), { args: ['--operations'] }))
    t.match(missing, { code: 1, stderr: /^error: cannot read .*missing\.ndjson: ENOENT/ })
  })
})

t.test('--operations: an answer cut short fails the command and says so', async (t) => {
  // A stand-in for the server that answers the bulk request as one cut short would: no real server ends so on demand.
  let answer = ''
  const stub = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      res.writeHead(200, { 'content-type': req.url === '/oauth2/v1/token' ? 'application/json' : 'application/x-ndjson' })
      res.end(req.url === '/oauth2/v1/token' ? '{"access_token":"t"}' : answer)
    })
  })
  stub.listen(0, '127.0.0.1')
  await once(stub, 'listening')
  t.teardown(() => stub.close())
  const url = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`
  const stdin = '{"method":"PUT","path":"nodes/core/customer/a"}\n\n{"method":"PUT","path":"nodes/core/customer/b"}\n'
  const cut = async (body: string): Promise<{ code: number; stdout: string; stderr: string }> => {
    answer = body
    return await outcome(tool(IMPORT, { url }, undefined, { args: ['--operations'], stdin }))
  }
  t.same(await cut('{"line":3,"status":400,"error":{"message":"bad"}}\n'), {
    code: 1, stdout: '', stderr: 'line 3: 400 bad\nerror: the answer was cut short before its summary line (the answer ended): which lines were applied is not known\n',
  }, 'no summary line')
  t.same(await cut('{"done":1,"failed":0}\n'), {
    code: 1, stdout: 'imported: 1 operations, 0 failed\n', stderr: 'error: the answer was cut short: the server took 1 of the 2 lines sent; the lines after those were not applied\n',
  }, 'fewer lines taken than sent (blank lines not counted)')
  t.same(await cut('{"done":2,"failed":0}\n'), { code: 0, stdout: 'imported: 2 operations, 0 failed\n', stderr: '' })
  t.match(await cut('<html>\n'), { code: 1, stderr: /^error: the server answered a line this command does not know: <html>\n$/ })
})
