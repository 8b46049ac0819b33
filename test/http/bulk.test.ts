// POST /graph/v1/{tenant}/bulk against the real server: every line answered
// as the single request it stands for, in order, one answer line per line
// and nothing more; bad lines fail alone; read routes are 405 on their line;
// 415, 401 and a body with no JSON line fail the request (malformed lines
// before good ones fail alone); answers=errors
// (the failed lines, then the summary); scope and consent per line; large
// bodies, long lines, and a client that reads its answers late.
import t from 'tap'
import { connect } from 'node:net'
import { call, createConsent } from '../helpers/client'
import { bulk, lineOf, single, type Op } from '../helpers/bulk'
import { getToken, serverForFile } from '../helpers/server'
import { until } from '../../bench/wait'

const MAX_BODY = 64 * 1024
const MAX_ELEMENTS = 64
const fixture = serverForFile(t, { args: ['--max-body', String(MAX_BODY), '--max-json-elements', String(MAX_ELEMENTS), '--max-json-depth', '6'] })
type Body = Record<string, unknown>

/** The answer lines of a raw HTTP/1.1 answer with a chunked body. */
function answerLinesOf(raw: Buffer): Record<string, unknown>[] {
  let at = raw.indexOf('\r\n\r\n') + 4
  const body: Buffer[] = []
  for (;;) {
    const eol = raw.indexOf('\r\n', at)
    const size = parseInt(raw.subarray(at, eol).toString(), 16)
    if (!(size > 0)) break
    body.push(raw.subarray(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return Buffer.concat(body).toString().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
}

const put = (path: string, body: unknown, consent?: string): Op => ({ method: 'PUT', path, body, ...(consent === undefined ? {} : { headers: { 'consent-reference': consent } }) })

t.test('the lines of one request: each answered as its single request, in order, and nothing more', async (t) => {
  const { server, token, consent } = fixture
  const ops: Op[] = [
    put('nodes/core/customer/b1', { name: 'Ann', age: 3 }, consent),
    put('nodes/core/customer/b1/email', 'ann@example.com', consent),
    put('relations/core/customer/b1/core/product/p1/core/viewed/v1', { lastSeen: 5 }, consent),
    { method: 'POST', path: 'counters/core/customer/b1/core/product/p1/core/viewed/v1/views', headers: { 'consent-reference': consent } },
    { method: 'POST', path: 'consents', body: { subject: 'someone' } },
    put('nodes/core/customer/b2', { name: 'Bo' }, consent),
    { method: 'DELETE', path: 'nodes/core/customer/b2' },
  ]
  const res = await bulk(server.url, 'demo', token, ops.map(lineOf).join(''))
  t.equal(res.status, 200)
  t.equal(res.contentType, 'application/x-ndjson')
  t.equal(res.lines.length, ops.length, 'one answer line per line: no summary')
  t.ok(res.lines.every((l) => typeof l.status === 'number' && l.done === undefined), 'every answer line is a line\'s answer')
  t.same(res.lines.slice(0, 3), [{ status: 204 }, { status: 204 }, { status: 204 }])
  t.equal(res.lines[3]!.status, 200)
  t.equal((res.lines[3]!.body as Body).views, 1, 'the counter answer carries the relation')
  t.equal(res.lines[4]!.status, 201)
  t.match((res.lines[4]!.body as Body).consentReference, /^cr_/)
  t.same(res.lines.slice(5), [{ status: 204 }, { status: 204 }])
  const node = (await fixture.graph.get('nodes/core/customer/b1')).json<Body>()
  t.same([node.name, node.age, node.email], ['Ann', 3, 'ann@example.com'])
  t.equal((await fixture.graph.get('nodes/core/customer/b2')).status, 404, 'applied in order: put, then delete')
})

t.test('bad lines fail alone with the answer of their single request; read routes and the rest are 405', async (t) => {
  const { server, token, consent } = fixture
  const bad: Op[] = [
    put('nodes/core/customer/e1', { name: 'X' }),
    put('nodes/core/customer/e1', { id: 'reserved' }, consent),
    put('nodes/core/customer/e1', [1, 2], consent),
    put('nodes/core/customer/e1', { name: 'X' }, 'cr_not_a_consent'),
    put('nodes/core/customer/%ZZ', { name: 'X' }, consent),
    put(`nodes/core/customer/${'i'.repeat(400)}`, { name: 'X' }, consent),
    { method: 'DELETE', path: 'consents/cr_unknown' },
  ]
  const res = await bulk(server.url, 'demo', token, bad.map(lineOf).join(''))
  t.equal(res.status, 200)
  for (const [i, op] of bad.entries()) t.same(res.lines[i], await single(server.url, 'demo', token, op), `${op.method} ${op.path.slice(0, 40)}`)

  const notWrites = ['{"method":"GET","path":"nodes/core/customer/b1"}', '{"method":"POST","path":"webhooks","body":{"url":"https://x"}}',
    '{"method":"POST","path":"import","body":{}}', '{"method":"PUT","path":"nothing/here"}', '{"method":"PUT","path":""}', '{"method":"PATCH","path":"nodes/core/customer/b1"}']
  const malformed = ['{"method":"PUT"}', 'not json', '[1,2]', '{"method":"PUT","path":"nodes/a/b/c","headers":{"consent-reference":5}}']
  const mixed = [lineOf(put('nodes/core/customer/e2', { name: 'Fine' }, consent)), ...[...notWrites, ...malformed].map((l) => `${l}\n`), lineOf(put('nodes/core/customer/e3', { name: 'Fine' }, consent))]
  const answers = (await bulk(server.url, 'demo', token, mixed.join(''))).lines
  t.same(answers[0], { status: 204 })
  for (const [i, line] of notWrites.entries()) t.equal(answers[i + 1]!.status, 405, line)
  for (const [i, line] of malformed.entries()) {
    const answer = answers[notWrites.length + 1 + i]!
    t.equal(answer.status, 400, line)
    t.equal((answer.error as Body).type, 'bad_request')
  }
  t.equal(answers.length, mixed.length, 'one answer line per line')
  t.same(answers.at(-1), { status: 204 })
  t.equal(answers.filter((a) => (a.status as number) >= 400).length, notWrites.length + malformed.length)
  t.equal((await fixture.graph.get('nodes/core/customer/e3')).status, 200, 'the line after the bad ones is applied')
})

t.test('malformed lines at the start fail alone: the lines after them are applied', async (t) => {
  const { server, token, consent } = fixture
  const body = `{"method":"PUT",\nnot json at all\n${lineOf(put('nodes/core/customer/m1', { name: 'M' }, consent))}{oops\n`
  const res = await bulk(server.url, 'demo', token, body)
  t.equal(res.status, 200)
  t.equal(res.lines.length, 4, 'one answer per line')
  t.same(res.lines.map((l) => l.status), [400, 400, 204, 400])
  t.match((res.lines[0]!.error as Body).message, /not valid JSON/)
  t.equal((await fixture.graph.get('nodes/core/customer/m1')).json<Body>().name, 'M')
  const numbered = await bulk(server.url, 'demo', token, body, '?answers=errors')
  t.same(numbered.lines.map((l) => l.line ?? l.done), [1, 2, 4, 4], 'answers=errors numbers them')
})

t.test('JSON text is UTF-8: a line or a body with other bytes is 400 and stores nothing; a leading byte order mark is ignored', async (t) => {
  const { server, token, consent } = fixture
  const notUtf8 = Buffer.concat([Buffer.from(`{"method":"PUT","path":"nodes/core/customer/u1","headers":{"consent-reference":"${consent}"},"body":{"name":"bad`), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')])
  const body = Buffer.concat([Buffer.from('\ufeff'), Buffer.from(lineOf(put('nodes/core/customer/u0', { name: 'BOM' }, consent))), notUtf8, Buffer.from(lineOf(put('nodes/core/customer/u2', { name: 'Fine' }, consent)))])
  const res = await bulk(server.url, 'demo', token, body)
  t.same(res.lines.map((l) => l.status), [204, 400, 204])
  t.match((res.lines[1]!.error as Body).message, 'the line is not valid JSON: it is not valid UTF-8')
  t.equal((await fixture.graph.get('nodes/core/customer/u1')).status, 404, 'the line with other bytes stored nothing')
  t.equal((await fixture.graph.get('nodes/core/customer/u0')).json<Body>().name, 'BOM')
  // {"n":"<0xc3>"}: a lead byte with no continuation.
  const single = await call('PUT', `${server.url}/graph/v1/demo/nodes/core/customer/u3`,
    { authorization: `Bearer ${token}`, 'consent-reference': consent, 'content-type': 'application/json' }, Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]))
  t.same([single.status, single.json<Body>().message], [400, 'the request body is not valid JSON: it is not valid UTF-8'], 'a single request the same')
  t.equal((await fixture.graph.get('nodes/core/customer/u3')).status, 404)
})

t.test('the request fails as a whole: 415, 401, and a body that is not NDJSON', async (t) => {
  const { server, token, consent } = fixture
  const body = lineOf(put('nodes/core/customer/r1', { name: 'X' }, consent))
  const json = await bulk(server.url, 'demo', token, body, '', 'application/json')
  t.equal(json.status, 415)
  t.equal((await bulk(server.url, 'demo', 'not-a-token', body)).status, 401)
  const notNdjson = await bulk(server.url, 'demo', token, 'hello\nworld\n')
  t.equal(notNdjson.status, 400)
  t.match(notNdjson.text, /not NDJSON/)
  const unknownMode = await bulk(server.url, 'demo', token, body, '?answers=some')
  t.same([unknownMode.status, (JSON.parse(unknownMode.text) as { message: string }).message], [400, 'the query parameter answers must be "all" (the default) or "errors"'], 'an unknown answers mode')
  t.equal((await fixture.graph.get('nodes/core/customer/r1')).status, 404, 'nothing was applied')
  const empty = await bulk(server.url, 'demo', token, '')
  t.same([empty.status, empty.contentType, empty.text], [200, 'application/x-ndjson', ''], 'an empty body: an empty answer')
  const emptyErrors = await bulk(server.url, 'demo', token, '', '?answers=errors')
  t.same([emptyErrors.status, emptyErrors.lines], [200, [{ done: 0, failed: 0 }]], 'with answers=errors, just the summary')
})

t.test('answers=errors: only the failed lines with their numbers, then the summary', async (t) => {
  const { server, token, consent } = fixture
  const text = [
    lineOf(put('nodes/core/customer/q1', { name: 'A' }, consent)),
    '\n',
    lineOf(put('nodes/core/customer/q2', { name: 'B' })),
    lineOf(put('nodes/core/customer/q3', { name: 'C' }, consent)),
    '{"method":"GET","path":"nodes/core/customer/q1"}\n',
  ].join('')
  const res = await bulk(server.url, 'demo', token, text, '?answers=errors')
  t.equal(res.status, 200)
  t.equal(res.lines.length, 3)
  t.same([res.lines[0]!.line, res.lines[0]!.status], [3, 400], 'line numbers count blank lines too')
  t.same([res.lines[1]!.line, res.lines[1]!.status], [5, 405])
  t.same(res.lines[2], { done: 4, failed: 2 }, 'the last line is the summary')
  t.equal((await fixture.graph.get('nodes/core/customer/q3')).status, 200)
  const allFine = await bulk(server.url, 'demo', token, lineOf(put('nodes/core/customer/q4', { name: 'D' }, consent)), '?answers=errors')
  t.same(allFine.lines, [{ done: 1, failed: 0 }], 'no line failed: the summary alone')
})

t.test('scope, tenant and consent are checked per line as for single requests', async (t) => {
  const { server, token, consent } = fixture
  const view = await getToken(server.url, 'platform.profile_graph_view')
  const refused = await bulk(server.url, 'demo', view, lineOf(put('nodes/core/customer/s1', { name: 'X' }, consent)))
  t.equal(refused.status, 403, 'the bulk request itself needs a write scope')
  t.equal((await bulk(server.url, 'acme', token, lineOf(put('nodes/core/customer/s1', { name: 'X' }, consent)))).status, 403, "another tenant's path")

  const revokedRef = await createConsent(server.url, 'demo', token, 'to-revoke')
  const other = await createConsent(server.url, 'demo', token, 'other')
  const ops: Op[] = [
    put('nodes/core/customer/s2', { name: 'Before' }, revokedRef),
    { method: 'DELETE', path: `consents/${encodeURIComponent(revokedRef)}` },
    put('nodes/core/customer/s2', { name: 'After' }, revokedRef),
    { method: 'POST', path: `consents/${encodeURIComponent(revokedRef)}/grant` },
    put('nodes/core/customer/s3', { name: 'Again' }, revokedRef),
    { method: 'PUT', path: `consents/${encodeURIComponent(other)}/revokedProperties`, body: ['email'] },
    put('nodes/core/customer/s4', { email: 'x@y' }, other),
  ]
  const res = await bulk(server.url, 'demo', token, ops.map(lineOf).join(''))
  t.same(res.lines.map((l) => l.status), [204, 204, 403, 204, 204, 204, 403])
  t.equal((await fixture.graph.get('nodes/core/customer/s3')).status, 200, 'granted again, in order')
  // The same refusal as a single request, with the consent revoked again.
  t.equal((await single(server.url, 'demo', token, ops[1]!)).status, 204)
  t.same(res.lines[2], await single(server.url, 'demo', token, ops[2]!), "the refused line's answer is the single request's")
  t.same(res.lines[6], await single(server.url, 'demo', token, ops[6]!), 'a revoked property: as the single request')
})

t.test('per-line headers: the trace id reaches the line\'s events', async (t) => {
  const { server, token, consent } = fixture
  const op: Op = { method: 'PUT', path: 'nodes/core/customer/tr1', headers: { 'consent-reference': consent, 'platform-context-trace-id': 'trace-bulk-1' }, body: { name: 'T' } }
  t.same((await bulk(server.url, 'demo', token, lineOf(op))).lines[0], { status: 204 })
  const events = (await fixture.graph.get('events?limit=1000')).json<{ events: { payload: Body; traceId?: string }[] }>().events
  const mine = events.filter((e) => e.payload.id === 'tr1')
  t.ok(mine.length > 0 && JSON.stringify(mine).includes('trace-bulk-1'), 'the CREATE event carries the line\'s trace id')
})

t.test('body limits per line: a body over --max-body is 413, a line too long to hold is 413 too, the request has no limit', async (t) => {
  const { server, token, consent } = fixture
  const big = 'x'.repeat(MAX_BODY)
  const huge = 'y'.repeat(MAX_BODY * 4)
  const lines = [
    put('nodes/core/customer/l1', { name: big }, consent),
    put('nodes/core/customer/l2', { name: huge }, consent),
    put('nodes/core/customer/l3', { name: 'small' }, consent),
  ]
  const res = await bulk(server.url, 'demo', token, lines.map(lineOf))
  t.same(res.lines.map((l) => l.status), [413, 413, 204])
  t.equal((res.lines[0]!.error as Body).type, 'payload_too_large')
  t.same(res.lines[0], await single(server.url, 'demo', token, lines[0]!), 'as the single request')
})

t.test('JSON limits per line: a body at the limits passes and one past them fails, as single requests', async (t) => {
  const { server, token, consent } = fixture
  // Elements: the body itself and its members. The line adds its own object and members around it.
  const members = (n: number): Body => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, i]))
  const nest = (levels: number): unknown => levels === 0 ? 1 : [nest(levels - 1)]
  const lines = [
    put('nodes/core/customer/j1', members(MAX_ELEMENTS - 1), consent),
    put('nodes/core/customer/j2', members(MAX_ELEMENTS), consent),
    put('nodes/core/customer/j3', { deep: nest(5) }, consent),
    put('nodes/core/customer/j4', { deep: nest(6) }, consent),
  ]
  const res = await bulk(server.url, 'demo', token, lines.map(lineOf).join(''))
  for (const [i, op] of lines.entries()) t.same(res.lines[i], await single(server.url, 'demo', token, op), op.path)
  t.same(res.lines.map((l) => l.status), [204, 400, 204, 400])
  t.match((res.lines[1]!.error as Body).detail ?? JSON.stringify(res.lines[1]), /more than 64 elements/)
})

t.test('a large body streams through: every line answered, in order', async (t) => {
  const { server, token, consent } = fixture
  const n = 30_000
  function* lines(): Generator<string> {
    for (let i = 0; i < n; i++) yield lineOf(put(`nodes/core/product/big${i % 5000}`, { title: `T${i}`, price: i }, consent))
  }
  const res = await bulk(server.url, 'demo', token, lines())
  t.equal(res.status, 200)
  t.equal(res.lines.length, n, 'one answer line per line, no summary')
  t.ok(res.lines.every((l) => l.status === 204), 'every line 204')
  const last = (await fixture.graph.get('nodes/core/product/big4999')).json<Body>()
  t.equal(last.price, n - 1, 'the last write of an id wins: lines applied in order')
})

t.test('a client that reads its answers only after sending everything still gets them all', async (t) => {
  const { server, token, consent } = fixture
  const n = 40_000
  const body = Buffer.from(Array.from({ length: n }, (_, i) => lineOf({ method: 'POST', path: `counters/core/customer/c${i % 10}/core/product/p/core/viewed/v/views`, headers: { 'consent-reference': consent } })).join(''))
  const url = new URL(server.url)
  const socket = connect(Number(url.port), url.hostname)
  socket.pause()
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  socket.write(`POST /graph/v1/demo/bulk HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${token}\r\ncontent-type: application/x-ndjson\r\ncontent-length: ${body.length}\r\n\r\n`)
  socket.write(body)
  // Not reading for a while: the server stops taking lines once its answers are not read.
  await new Promise((r) => setTimeout(r, 1500))
  const chunks: Buffer[] = []
  socket.on('data', (c: Buffer) => chunks.push(c))
  socket.resume()
  // The answer is chunked; its last chunk (size 0) ends it.
  await until('the end of the answer', () => Buffer.concat(chunks).toString().endsWith('\r\n0\r\n\r\n'), 60_000)
  socket.destroy()
  const answers = answerLinesOf(Buffer.concat(chunks))
  t.equal(answers.length, n, 'one answer line per line, no summary')
  t.ok(answers.every((a) => a.status === 200), 'every counter answered 200')
  const rel = await fixture.graph.get('relations/core/customer/c3/core/product/p/core/viewed/v')
  t.equal(rel.json<Body>().views, n / 10)
})

t.test('OpenAPI describes the bulk route', async (t) => {
  const doc = (await call('GET', `${fixture.server.url}/openapi.json`)).json<{ paths: Record<string, Record<string, { requestBody?: { content: Record<string, unknown> }; responses: Record<string, { content?: Record<string, unknown> }> }>> }>()
  const op = doc.paths['/graph/v1/{tenant}/bulk']?.post
  t.ok(op?.requestBody?.content['application/x-ndjson'] !== undefined)
  t.ok(op?.responses['200']?.content?.['application/x-ndjson'] !== undefined)
})
