// What a client sees at the HTTP layer itself:
// no library banner in answers, a 413 the client can read, and what
// uWebSockets.js decides for malformed heads and pipelining
// (docs/manual/http-edges.md).
import t from 'tap'
import { call } from '../helpers/client'
import { rawExchange, statuses, type RawResult } from '../helpers/raw-http'
import { serverForFile } from '../helpers/server'
import { sleep } from '../../bench/wait'

const MAX_BODY = 64 * 1024
const fixture = serverForFile(t, { args: ['--max-body', String(MAX_BODY)] })
const url = (): string => fixture.server.url

t.test('answers carry no uWebSockets header; Date stays', async (t) => {
  const res = await call('GET', `${url()}/errors`)
  t.equal(res.status, 200)
  t.equal(res.headers.uwebsockets, undefined)
  t.type(res.headers.date, 'string')
  const err = await call('GET', `${url()}/nothing`)
  t.equal(err.status, 404)
  t.equal(err.headers.uwebsockets, undefined)
})

t.test('a body over MAX_BODY: the client reads the whole 413, no reset', async (t) => {
  const path = `/graph/v1/demo/nodes/core/customer/big`
  const auth = `Authorization: Bearer ${fixture.token}\r\nconsent-reference: ${fixture.consent}\r\nContent-Type: application/json\r\n`
  const body = Buffer.alloc(4 * 1024 * 1024, 0x20) // 4 MiB of spaces: 64 times the limit
  const declared = await rawExchange(url(), [`PUT ${path} HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: ${body.length}\r\n\r\n`, body], 20_000)
  t.equal(declared.error, undefined, 'no ECONNRESET or EPIPE')
  t.same(statuses(declared.text), [413])
  t.match(declared.text, /"type":"payload_too_large"/)
  t.match(declared.text, /Connection: close/i)
  t.ok(declared.closed, 'then the server closes the connection')

  // Chunked: no length up front, the limit is found while reading.
  const chunk = Buffer.alloc(256 * 1024, 0x20)
  const chunks: (string | Buffer)[] = [`PUT ${path} HTTP/1.1\r\nHost: x\r\n${auth}Transfer-Encoding: chunked\r\n\r\n`]
  for (let i = 0; i < 16; i++) chunks.push(`${chunk.length.toString(16)}\r\n`, chunk, '\r\n')
  chunks.push('0\r\n\r\n')
  const streamed = await rawExchange(url(), chunks, 20_000)
  t.equal(streamed.error, undefined, 'no reset for a chunked upload either')
  t.same(statuses(streamed.text), [413])
  t.ok(streamed.closed)

  t.equal((await fixture.graph.put('nodes/core/customer/small', { name: 'fits' })).status, 204, 'the server goes on')
})

t.test('Expect: 100-continue: the library writes 100 Continue itself, to any request, before its answer', async (t) => {
  const expecting = (target: string, value: string): Promise<RawResult> => rawExchange(url(), [`GET ${target} HTTP/1.1\r\nHost: x\r\nExpect: ${value}\r\n\r\n`], 2_000)
  t.same(statuses((await expecting('/errors', '100-continue')).text), [100, 200])
  t.same(statuses((await expecting('/nothing', '100-continue')).text), [100, 404], 'whatever the answer will be')
  t.same(statuses((await expecting('/errors', '100-Continue')).text), [200], 'only for the value in lower case')
})

t.test('malformed heads: what uWebSockets.js decides (JavaScript never sees them)', async (t) => {
  // Answered at once by the library's own 505 page (its version is compiled in; see docs/manual/http-edges.md).
  const leadingEmpty = await rawExchange(url(), ['\r\nGET /errors HTTP/1.1\r\nHost: x\r\n\r\n'], 15_000)
  t.same(statuses(leadingEmpty.text), [505], 'one leading empty line: 505')
  t.ok(leadingEmpty.closed)
  const emptyLineAlone = await rawExchange(url(), ['\r\n', 'GET /errors HTTP/1.1\r\nHost: x\r\n\r\n'], 15_000, 300)
  t.same(statuses(emptyLineAlone.text), [505], 'the empty line in a read of its own: the 505 once the request line is in')
  const bareLineFeeds = await rawExchange(url(), ['\n\nGET /errors HTTP/1.1\r\nHost: x\r\n\r\n'], 15_000)
  t.same(statuses(bareLineFeeds.text), [505], 'two bare LFs: 505')
  const controlInTarget = await rawExchange(url(), ['GET /err\x01ors HTTP/1.1\r\nHost: x\r\n\r\n'], 15_000)
  t.same(statuses(controlInTarget.text), [505])
  const split = await rawExchange(url(), ['GET /errors HTTP/1.1\r\nHost: x\r\n', `X-A: ${'a'.repeat(5000)}\r\n\r\n`], 15_000, 300)
  t.same(statuses(split.text), [431], 'a head over 4 KiB in two reads: the library\'s 431')
  const oneRead = await rawExchange(url(), [`GET /errors HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(5000)}\r\n\r\n`], 2_000)
  t.same(statuses(oneRead.text), [200], 'the same head in one read is accepted')
  // No answer; the library closes the connection after its 10 s timeout (both wait at once).
  let many = 'GET /errors HTTP/1.1\r\nHost: x\r\n'
  for (let i = 0; i < 100; i++) many += `X-H${i}: v\r\n`
  const request = 'GET /errors HTTP/1.1\r\nHost: x\r\n\r\n'
  const [controlInHeader, tooMany, twoEmpty, twoEmptyApart] = await Promise.all([
    rawExchange(url(), ['GET /errors HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n'], 30_000),
    rawExchange(url(), [`${many}\r\n`], 30_000),
    rawExchange(url(), [`\r\n\r\n${request}`], 30_000),
    rawExchange(url(), ['\r\n', '\r\n', request], 30_000, 300),
  ])
  t.equal(twoEmpty.text, '', 'no answer when the bytes begin with two empty lines (CRLF CRLF)')
  t.ok(twoEmpty.closed, 'closed by the library')
  t.equal(twoEmptyApart.text, '', 'nor when they arrive in reads of their own')
  t.ok(twoEmptyApart.closed)
  t.equal(controlInHeader.text, '', 'no answer to a control character in a header value')
  t.ok(controlInHeader.closed, 'closed by the library')
  t.equal(tooMany.text, '', 'no answer to 100 headers and more')
  t.ok(tooMany.closed)
  t.equal((await call('GET', `${url()}/errors`)).status, 200, 'the server goes on')
})

t.test('pipelining: answers in order when synchronous; behind an asynchronous answer the library closes the connection', async (t) => {
  const sync = await rawExchange(url(), ['GET /errors HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\nGET /errors HTTP/1.1\r\nHost: x\r\n\r\n'], 2_000)
  t.same(statuses(sync.text), [200, 404, 200])
  const get = `GET /graph/v1/demo/nodes/core/customer/p1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixture.token}\r\n\r\n`
  const behindAsync = await rawExchange(url(), [get + get], 15_000)
  t.same(statuses(behindAsync.text), [], 'uWebSockets.js refuses asynchronous pipelining: neither is answered')
  t.ok(behindAsync.closed, 'the connection is closed at once')
})

t.test('a write pipelined into a connection the library closes is not applied', async (t) => {
  const body = '{"name":"pipelined"}'
  const put = `PUT /graph/v1/demo/nodes/core/customer/pipelined-write HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixture.token}\r\n`
    + `Content-Type: application/json\r\nConsent-Reference: ${fixture.consent}\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  const get = `GET /graph/v1/demo/nodes/core/customer/p1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fixture.token}\r\n\r\n`
  const res = await rawExchange(url(), [put + get], 15_000)
  t.same(statuses(res.text), [], 'neither is answered')
  t.ok(res.closed)
  await sleep(300)
  t.equal((await fixture.graph.get('nodes/core/customer/pipelined-write')).status, 404, 'the unanswered write was dropped before it reached its shard')
})

t.test('request headers: names in any case, and the first of a repeated header is the one read', async (t) => {
  const path = '/graph/v1/demo/nodes/core/customer/headers-read'
  t.equal((await fixture.graph.put('nodes/core/customer/headers-read', { name: 'h' })).status, 204)
  const get = (head: string) => rawExchange(url(), [`GET ${path} HTTP/1.1\r\nHost: x\r\n${head}\r\n`], 10_000, 300)
  const good = `Bearer ${fixture.token}`
  t.same(statuses((await get(`aUtHoRiZaTiOn: ${good}\r\n`)).text), [200], 'a name in mixed case is read')
  t.same(statuses((await get(`Authorization: ${good}\r\nAuthorization: Bearer nonsense\r\n`)).text), [200], 'the first value counts')
  t.same(statuses((await get(`Authorization: Bearer nonsense\r\nAuthorization: ${good}\r\n`)).text), [401], 'not a later one')
  t.same(statuses((await get(`X-Unrelated: 1\r\nAccept: application/json\r\nAuthorization: ${good}\r\n`)).text), [200], 'among headers the routes do not read')
})
