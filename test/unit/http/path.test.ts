import t from 'tap'
import { decodePath, decodeQuery } from '../../../src/http/path'
import { ApiError } from '../../../src/core/errors'

t.test('each segment is decoded on its own; %2F stays inside the id', async (t) => {
  t.same(decodePath('/graph/v1/demo/nodes/core/customer/a%2Fb'), ['graph', 'v1', 'demo', 'nodes', 'core', 'customer', 'a/b'])
})

t.test('spaces, @, +, % and any Unicode survive', async (t) => {
  const id = 'John Doe+x@example.com 100% ✓ 日本'
  t.same(decodePath(`/n/${encodeURIComponent(id)}`), ['n', id])
  t.same(decodePath('/n/a+b'), ['n', 'a+b'], 'a literal + in a path is not a space')
})

t.test('a single trailing slash is tolerated, empty inner segments are kept', async (t) => {
  t.same(decodePath('/a/b/'), ['a', 'b'])
  t.same(decodePath('/a//b'), ['a', '', 'b'])
})

t.test('bad percent-encoding is a 400 naming the segment', async (t) => {
  const err = t.throws(() => decodePath('/a/%ZZ')) as ApiError
  t.equal(err.status, 400)
  t.equal(err.type, 'bad_request')
  t.match(err.message, /segment 2/)
})

t.test('segments without "%" are handed back as they are, whatever they hold; escaped ones beside them decoded', async (t) => {
  const raw = '/graph/v1/d\u00e9mo/nodes/a%20b/\ud800/x:y@z'
  t.same(decodePath(raw), ['graph', 'v1', 'd\u00e9mo', 'nodes', 'a b', '\ud800', 'x:y@z'])
  const plain = '/graph/v1/d\u00e9mo/nodes/a%20b/x:y@z/%E2%9C%93'
  t.same(decodePath(plain), plain.split('/').slice(1).map((part) => decodeURIComponent(part)), 'the same as decoding every segment')
  const err = t.throws(() => decodePath('/a/b/c%')) as ApiError
  t.match(err.message, /segment 3 \("c%"\)/)
})

t.test('query decoding treats + and %20 as spaces', async (t) => {
  t.equal(decodeQuery('q=name:%22John+Smith%22').get('q'), 'name:"John Smith"')
  t.equal(decodeQuery(undefined).get('q'), null)
})
