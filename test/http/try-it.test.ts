// The README's "Try it" lines, run as written (bash and curl) against the
// demo bootstrap, twice on the same data directory: the second run works as
// the first did (an earlier run's node, owned by its consent, is removed first).
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { demoServer, ROOT } from '../helpers/server'

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const section = readme.slice(readme.indexOf('\n## Try it\n'))
const lines = /```sh\n([\s\S]*?)```/.exec(section)![1]!

t.test('the Try it lines work on a new data directory and again on the kept one', async (t) => {
  const server = await demoServer(t, 'try-it-')
  const script = lines.replaceAll('http://127.0.0.1:8080', server.url)
  t.not(script, lines, 'the lines name the default address')
  for (const run of ['first', 'second']) {
    const out = execFileSync('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 })
    t.match(out, /^HTTP\/1\.1 204 /m, `${run} run: the PUT of the node is 204`)
    t.notMatch(out, /"status":\s*4\d\d|"status":\s*5\d\d/, `${run} run: no error body`)
    t.match(out, /"name":"John Smith"/, `${run} run: the node reads back`)
    t.match(out, /"views":1\b/, `${run} run: the counter starts from one`)
    t.match(out, /\{"done":1,"failed":0\}/, `${run} run: the bulk write's summary`)
    t.match(out, /^X-Total-Count: \d+/mi, `${run} run: the count header`)
  }
})
