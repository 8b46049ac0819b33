// The request metrics are counted in plain numbers per route, method and
// status and handed to prom-client only at scrape time: the text a scrape
// reads is what prom-client's own labelled counter and histogram would write
// for the same requests, and the request path never calls prom-client.
import t from 'tap'
import { Counter, Histogram, Registry } from 'prom-client'
import { registry, requestAnswered } from '../../../src/telemetry/metrics'

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
const ANSWERS: Array<[string, string, number, number]> = [
  ['/graph/v1/:tenant/nodes/:ns/:type/:id', 'GET', 200, 0.0003],
  ['/graph/v1/:tenant/nodes/:ns/:type/:id', 'GET', 200, 0.0005],
  ['/graph/v1/:tenant/nodes/:ns/:type/:id', 'GET', 404, 0.002],
  ['/graph/v1/:tenant/nodes/:ns/:type/:id', 'PUT', 204, 0.03],
  ['/oauth2/v1/token', 'POST', 200, 12],
  ['/oauth2/v1/token', 'POST', 200, 0.7],
]

const requestLines = (text: string): string[] => text.split('\n').filter((l) => l.startsWith('http_request')).sort()

t.test('a scrape reads what prom-client would have counted', async (t) => {
  const reference = new Registry()
  const labelNames = ['route', 'method', 'status'] as const
  const count = new Counter({ name: 'http_requests_total', help: 'x', labelNames, registers: [reference] })
  const seconds = new Histogram({ name: 'http_request_duration_seconds', help: 'x', labelNames, buckets: BUCKETS, registers: [reference] })
  for (const [route, method, status, s] of ANSWERS) {
    requestAnswered(route, method, status, s)
    count.inc({ route, method, status: String(status) })
    seconds.observe({ route, method, status: String(status) }, s)
  }
  const ours = requestLines(await registry.metrics())
  t.ok(ours.length > 0)
  t.same(ours, requestLines(await reference.metrics()))
  const json = await registry.getMetricsAsJSON()
  t.same(json.find((m) => m.name === 'http_request_duration_seconds')?.values, (await reference.getMetricsAsJSON()).find((m) => m.name === 'http_request_duration_seconds')?.values, 'and get() the same values')
})

t.test('the request path does not call prom-client', async (t) => {
  const inc = Counter.prototype.inc
  const observe = Histogram.prototype.observe
  const calls: string[] = []
  Counter.prototype.inc = function () { calls.push('inc') }
  Histogram.prototype.observe = function () { calls.push('observe') }
  t.teardown(() => {
    Counter.prototype.inc = inc
    Histogram.prototype.observe = observe
  })
  for (let i = 0; i < 100; i++) requestAnswered('/graph/v1/:tenant/nodes/:ns/:type/:id', 'GET', 200, 0.001)
  t.same(calls, [])
})

t.test('methods a client invents are counted as OTHER, not as series of their own', async (t) => {
  for (let i = 0; i < 50; i++) requestAnswered('/unmatched', `INVENTED${i}`, 405, 0.001)
  const lines = requestLines(await registry.metrics()).filter((l) => l.includes('route="/unmatched"'))
  t.notOk(lines.some((l) => l.includes('INVENTED')), 'no invented method is a label')
  t.ok(lines.some((l) => l.startsWith('http_requests_total') && l.includes('method="OTHER"') && l.endsWith(' 50')), 'all 50 counted under OTHER')
})

t.test('every label value comes from a fixed set (statuses by class, methods by name or OTHER, 405 as OTHER)', async (t) => {
  const route = '/test/route'
  for (let status = 0; status < 1200; status++) for (const method of ['GET', 'BREW', 'X'.repeat(20)]) requestAnswered(route, method, status, 0.001)
  const lines = (await registry.metrics()).split('\n').filter((l) => l.startsWith('http_requests_total{') && l.includes(`route="${route}"`))
  const labels = lines.map((l) => /method="([^"]*)",status="([^"]*)"/.exec(l)!.slice(1).join(' '))
  t.equal(new Set(labels).size, labels.length, 'no series twice')
  const statuses = new Set(labels.map((l) => l.split(' ')[1]))
  t.ok(statuses.size <= 40, `${statuses.size} status values`)
  t.ok(statuses.has('404') && statuses.has('4xx') && statuses.has('other'), 'known codes by code, the others by class')
  t.same(new Set(labels.map((l) => l.split(' ')[0])), new Set(['GET', 'OTHER']))
  t.ok(labels.includes('OTHER 405') && !labels.includes('GET 405'), 'a 405 under OTHER')
})
