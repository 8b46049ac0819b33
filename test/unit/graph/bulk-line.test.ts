// A bulk line read as the request it stands for: its shape, the headers it
// may carry, its body parsed once, whether the line settles the body's JSON
// limits, and the limits named as a single request's body would name them.
import t from 'tap'
import { parseBulkLine } from '../../../src/graph/bulk-line'

const limits = { maxDepth: 4, maxElements: 20 }
const parse = (text: string) => parseBulkLine(Buffer.from(text), limits)

t.test('a line with method, path, headers and body', async (t) => {
  const p = parse('{"method":"PUT","path":"nodes/core/customer/a%2Fb","headers":{"Consent-Reference":"c1","x-other":"y"},"body":{ "name" : "A" }}')
  t.ok(p.ok)
  if (!p.ok) return
  t.equal(p.line.method, 'PUT')
  t.equal(p.line.path, 'nodes/core/customer/a%2Fb')
  t.same(p.line.headers, [['consent-reference', 'c1']], 'names in lower case; headers a write does not read are dropped')
  t.same(p.line.body?.value, { name: 'A' }, 'the body, parsed')
  t.equal(p.line.body?.fitsLimits, true)
})

t.test('no body is no body; null is a body', async (t) => {
  const none = parse('{"method":"DELETE","path":"nodes/a/b/c"}')
  t.equal(none.ok && none.line.body, undefined)
  const text = '{"method":"PUT","path":"nodes/a/b/c","body":null}'
  const nul = parse(text)
  t.same(nul.ok && nul.line.body, { value: null, fitsLimits: true, lineBytes: text.length })
})

t.test('a line near the limits leaves the body\'s own check to the dispatcher', async (t) => {
  // The limit is 20 elements: the first line has 1 + 3 members + 16 items; the second 1 + 4 + 1 header + 19 items, its body alone 1 + 19.
  const items = (n: number): string => JSON.stringify(Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i])))
  const within = parse(`{"method":"PUT","path":"x","body":${items(16)}}`)
  t.ok(within.ok && within.line.body?.fitsLimits, 'the whole line within the limits: so is its body')
  const near = parse(`{"method":"PUT","path":"x","headers":{"consent-reference":"c"},"body":${items(19)}}`)
  t.ok(near.ok && near.line.body?.fitsLimits === false, 'the line past them: the body is checked on its own')
  const deepLine = parse('{"method":"PUT","path":"x","body":[[[[1]]]]}')
  t.ok(deepLine.ok && deepLine.line.body?.fitsLimits, 'the envelope\'s level is allowed for')
})

t.test('not JSON at all is told apart from a JSON value of the wrong shape', async (t) => {
  const bad = parse('hello')
  t.ok(!bad.ok && bad.notJson && bad.error.status === 400)
  const notUtf8 = parseBulkLine(Buffer.from([0x7b, 0xff, 0x7d]), limits)
  t.ok(!notUtf8.ok && notUtf8.notJson && notUtf8.error.message === 'the line is not valid JSON: it is not valid UTF-8', 'bytes that are not UTF-8 are not JSON')
  for (const text of ['[1]', '"x"', '{"method":1,"path":"x"}', '{"method":"PUT"}', '{"method":"PUT","path":"x","headers":{"a":1}}', '{"method":"PUT","path":"x","headers":[]}']) {
    const p = parse(text)
    t.ok(!p.ok && !p.notJson && p.error.status === 400, text)
  }
})

t.test('a body past the depth limit fails with the single request message, before any parse', async (t) => {
  const deep = '[[[[[1]]]]]'
  const p = parse(`{"method":"PUT","path":"x","body":${deep}}`)
  t.ok(!p.ok)
  if (!p.ok) t.match(p.error.message, /deeper than 4 levels/)
  const ok = parse('{"method":"PUT","path":"x","body":[[[[1]]]]}')
  t.ok(ok.ok, 'the envelope adds no level of its own to the body')
})
