// The client package's ESM build in headless Chromium, as a page of an
// origin the service allows (--cors-origins) loads it: a write with its
// consent reference, a read, a streamed list read, a bulk request and the
// event stream over the browser's own WebSocket (token in access_token).
import t from 'tap'
import { createReadStream, existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, normalize } from 'node:path'
import { chromiumMissing, launchChromium } from '../helpers/chromium'
import { ROOT, serverForTest } from '../helpers/server'

const ESM = join(ROOT, 'packages', 'client', 'dist', 'esm')
// The page's script, as a module of the page (plain JavaScript: the test's compiler does not touch it).
const PAGE = `<!doctype html><title>client</title>
<script type="module">
import { ProfileGraphClient, bulkLines, isLocked } from '/client/index.js'
window.run = async ({ base, token, consent }) => {
  const graph = new ProfileGraphClient({ baseUrl: base, tenant: 'demo', token })
  const { next: start } = await graph.readEvents({ after: 0, limit: 1000 })
  const ann = { ns: 'core', type: 'customer', id: 'browser/ann' }
  await graph.putNode(ann, { name: 'Ann', age: 30 }, consent)
  const node = await graph.getNode(ann)
  const bulk = graph.bulk({ maxLines: 50 })
  const writer = bulk.writable.getWriter()
  for (let i = 0; i < 120; i++) await writer.write(bulkLines.putNode({ ns: 'list', type: 'person', id: 'b' + i }, { age: i }, consent))
  await writer.close()
  const summary = await bulk.summary()
  let listed = 0
  for await (const _ of graph.listNodes({ ns: 'list', type: 'person' })) if (++listed === 100) break
  const sequences = []
  for await (const e of graph.events({ after: start })) if (sequences.push(e.sequence) === 3) break
  return { name: isLocked(node) ? undefined : node.name, summary, listed, count: await graph.countNodes({ ns: 'list', type: 'person' }), sequences, start }
}
</script>`

t.test('the client runs in a browser', { skip: chromiumMissing() }, async (t) => {
  // a static origin of its own: the page and the package's ESM files under /client/
  const pages = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path === '/') return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE)
    const file = normalize(join(ESM, path.replace(/^\/client\//, '')))
    if (!path.startsWith('/client/') || !file.startsWith(ESM) || !existsSync(file)) return void res.writeHead(404).end()
    res.writeHead(200, { 'content-type': 'text/javascript' })
    createReadStream(file).pipe(res)
  })
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => pages.close(() => resolve())))
  const origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`

  const { server, token, consent } = await serverForTest(t, { args: ['--cors-origins', origin] })
  const browser = await launchChromium()
  t.teardown(() => browser.close())
  const page = await browser.context.newPage()
  await page.goto(`${origin}/`)

  await page.waitForFunction('typeof window.run === "function"')
  const got = await page.evaluate(`window.run(${JSON.stringify({ base: server.url, token, consent })})`) as {
    name: unknown; summary: unknown; listed: number; count: number; sequences: number[]; start: number
  }

  t.equal(got.name, 'Ann', 'a write and a read')
  t.same(got.summary, { done: 120, failed: 0 }, 'a bulk request of three requests')
  t.equal(got.listed, 100, 'a list read left early')
  t.equal(got.count, 120, 'the count header, exposed to the page')
  t.same(got.sequences, [1, 2, 3].map((i) => got.start + i), "the event stream over the browser's WebSocket")
})
