// The gateway's URL rewrite (spec 1.6) on streamed bodies: the source URL
// becomes the proxy URL with path, query and fragment kept, only where a URL
// starts with it, whatever the chunk boundaries.
import t from 'tap'
import { UrlRewriter } from '../../../src/gateway/url-rewriter'

const SOURCE = 'http://svc.internal:9000/api'
const PROXY = 'https://gw.example/gateway/pkg/svc'

const body = [
  `{"self":"${SOURCE}/items/1?x=1#top","next":"${SOURCE}?page=2","root":"${SOURCE}",`,
  `"other":"http://elsewhere.example/api/items","longer":"${SOURCE}ary/1","glued":"x${SOURCE}/1",`,
  `"text":"see ${SOURCE}/a and ${SOURCE}/b", "multi":"é€😀 ${SOURCE}/é"}`,
].join('')
const expected = [
  `{"self":"${PROXY}/items/1?x=1#top","next":"${PROXY}?page=2","root":"${PROXY}",`,
  `"other":"http://elsewhere.example/api/items","longer":"${SOURCE}ary/1","glued":"x${SOURCE}/1",`,
  `"text":"see ${PROXY}/a and ${PROXY}/b", "multi":"é€😀 ${PROXY}/é"}`,
].join('')

function streamed(chunks: Buffer[]): string {
  const r = new UrlRewriter(SOURCE, PROXY)
  return chunks.map((c) => r.push(c)).join('') + r.end()
}

t.test('one piece', async (t) => {
  t.equal(streamed([Buffer.from(body)]), expected)
})

t.test('split at every byte offset into two chunks', async (t) => {
  const bytes = Buffer.from(body)
  for (let i = 1; i < bytes.length; i++) {
    const got = streamed([bytes.subarray(0, i), bytes.subarray(i)])
    if (got !== expected) t.fail(`split at ${i}: ${got}`)
  }
  t.pass('every split gives the same rewrite')
})

t.test('one byte per chunk', async (t) => {
  const bytes = Buffer.from(body)
  t.equal(streamed([...bytes].map((b) => Buffer.from([b]))), expected)
})

t.test('header values: location and link', async (t) => {
  t.equal(UrlRewriter.once(SOURCE, PROXY, `${SOURCE}/next?a=b`), `${PROXY}/next?a=b`)
  t.equal(UrlRewriter.once(SOURCE, PROXY, `<${SOURCE}/p/2>; rel="next", <http://other/x>; rel="help"`), `<${PROXY}/p/2>; rel="next", <http://other/x>; rel="help"`)
  t.equal(UrlRewriter.once(SOURCE, PROXY, '/relative/path'), '/relative/path')
})
