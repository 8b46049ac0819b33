// The TypeScript in the README's "Try it" and the client package's README
// (the small enricher, the neighbour reader), as written: type-checked
// against the package, then run as ES modules against the demo bootstrap.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { ProfileGraphClient } from '@profile-graph/client'
import { demoServer, ROOT } from '../helpers/server'

/** The first ```ts block after `heading` in `file`. */
function example(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8')
  const at = text.indexOf(`\n${heading}\n`)
  if (at < 0) throw new Error(`${file} has no ${heading}`)
  return /```ts\n([\s\S]*?)```/.exec(text.slice(at))![1]!
}

const EXAMPLES = {
  tryIt: example('README.md', '## Try it'),
  enricher: example('packages/client/README.md', '## A small enricher'),
  neighbours: example('packages/client/README.md', '## A neighbour reader'),
}

// A directory of the examples that resolves packages as the repository does.
const dir = mkdtempSync(join(tmpdir(), 'readme-examples-'))
symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const files = Object.fromEntries(Object.entries(EXAMPLES).map(([name, code]) => {
  const file = join(dir, `${name}.mts`)
  writeFileSync(file, code)
  return [name, file]
})) as Record<keyof typeof EXAMPLES, string>

t.test('the examples type-check against the package', async (t) => {
  const program = ts.createProgram(Object.values(files), {
    module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022,
    strict: true, noEmit: true, skipLibCheck: true, types: ['node'],
  })
  const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
  t.same(problems, [], 'no type error')
})

t.test('the examples run against the demo bootstrap', async (t) => {
  const server = await demoServer(t, 'readme-examples-')
  const run = (name: keyof typeof EXAMPLES, ...args: string[]): string => {
    const js = ts.transpileModule(EXAMPLES[name].replaceAll('http://127.0.0.1:8080', server.url), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText
    const file = join(dir, `${name}.mjs`)
    writeFileSync(file, js)
    return execFileSync(process.execPath, [file, ...args], { encoding: 'utf8', timeout: 60_000 })
  }

  for (const round of ['first', 'second']) {
    const out = run('tryIt')
    t.match(out, /^John Smith$/m, `${round} run: the node reads back`)
    t.match(out, /views: 1\b/, `${round} run: the counter starts from one`)
    t.match(out, /\{ done: 1, failed: 0 \}/, `${round} run: the bulk summary`)
    t.match(out, /^john\/1 0$/m, `${round} run: the neighbours' source first`)
    t.match(out, /^p1 1$/m, `${round} run: then the product it viewed, with its relation`)
    t.match(out, /^[1-9]\d*$/m, `${round} run: the count`)
  }
  t.match(run('neighbours', 'john/1'), /^john\/1:\n {2}core\/product p1 via viewed v1$/m, 'the neighbour reader lists the product john viewed')
  t.match(run('neighbours', 'nobody'), /nobody is not in the graph/, 'and says when the node is missing')

  const graph = new ProfileGraphClient({ baseUrl: server.url, tenant: 'demo', credentials: { clientId: 'demo-enricher', clientSecret: 'demo-secret' } })
  let end = 0
  for (let page = await graph.readEvents({ after: 0, limit: 1000 }); page.events.length > 0; page = await graph.readEvents({ after: end, limit: 1000 })) end = page.next
  const consent = await graph.createConsent({ subject: 'new-customers' })
  const ids = ['new-1', 'new-2', 'new-3']
  for (const id of ids) await graph.putNode({ ns: 'core', type: 'customer', id }, { name: 'New' }, consent)
  const out = run('enricher', String(end))
  t.equal(out.match(/^cursor \d+$/gm)?.length, 3, 'the enricher took three new customers')
  t.match(out, /\{ done: 3, failed: 0 \}/, 'and wrote three relations')
  for (const id of ids) {
    const relation = await graph.getRelation({ from: { ns: 'core', type: 'customer', id }, to: { ns: 'core', type: 'product', id: 'web-shop' }, rel: { ns: 'core', type: 'viewed', id: 'source' } })
    t.match(relation, { consentReference: consent, fid: id }, `${id}: the relation, under the customer's consent`)
  }
})
