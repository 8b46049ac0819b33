// A bulk line read as the request it stands for: its shape, the headers it
// may carry, its body as compact JSON text, and the JSON limits named as a
// single request's body would name them.
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
  t.equal(p.line.body.toString(), '{"name":"A"}', 'the body as compact JSON text')
})

t.test('no body is an empty body; null is a body', async (t) => {
  const none = parse('{"method":"DELETE","path":"nodes/a/b/c"}')
  t.equal(none.ok && none.line.body.length, 0)
  const nul = parse('{"method":"PUT","path":"nodes/a/b/c","body":null}')
  t.equal(nul.ok && nul.line.body.toString(), 'null')
})

t.test('not JSON at all is told apart from a JSON value of the wrong shape', async (t) => {
  const bad = parse('hello')
  t.ok(!bad.ok && bad.notJson && bad.error.status === 400)
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
