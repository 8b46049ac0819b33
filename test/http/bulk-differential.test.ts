// Differential: the same random operations, bad ones among them (bodies,
// paths, consents, the optional headers of every kind, header names in any
// case), sent as single requests to one server and as the lines of bulk
// requests to another, end in the same answers, the same export and the same events,
// once what each server makes up itself is mapped one to one (consent
// references, timestamps, its URL). Malformed lines, which have no single
// request, are mixed into the bulk body and must change nothing else.
import t from 'tap'
import { call, createConsent } from '../helpers/client'
import { bulk, lineOf, single, type Op } from '../helpers/bulk'
import { getToken, serverForTest } from '../helpers/server'
import { seeded, type Random } from '../../bench/random'

const OPS = 600
const SEED = Number(process.env['BULK_DIFF_SEED'] ?? 20261128)
const CONSENTS = 3

/** An op whose consent header and consent paths name a consent by index ("@0"), filled in per server. */
function randomOps(rand: Random): Op[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!
  const id = (): string => pick(['a', 'b', 'c', '%C3%A9', '%F0%9F%98%80', 'e%2Ff', 'g%20h', 'x.y', '-'])
  const consent = (): Record<string, string> => {
    const h: Record<string, string> = rand() < 0.05 ? {} : { [pick(['consent-reference', 'Consent-Reference', 'CONSENT-REFERENCE'])]: rand() < 0.05 ? 'cr_unknown' : `@${Math.floor(rand() * CONSENTS)}` }
    if (rand() < 0.2) h['platform-context-trace-id'] = pick(['t1', 'trace-' + Math.floor(rand() * 100), '', 'x'.repeat(300)])
    if (rand() < 0.15) h['platform-schedule-event-at'] = pick(['2031-01-01T00:00:00Z', 'garbage', '2031-13-01T00:00:00Z', '1d', 'P1D'])
    if (rand() < 0.1) h['platform-schedule-event-parameter'] = pick(['p', '', 'q r'])
    if (rand() < 0.1) h['platform-decay-at'] = pick(['2031-01-01T00:00:00Z', 'nope', 'P2D'])
    if (rand() < 0.05) h['platform-decay-parameters'] = 'd'
    if (rand() < 0.05) h['x-unknown'] = 'u'
    return h
  }
  const rel = (): string => `core/customer/${id()}/core/product/${id()}/core/viewed/${pick(['v1', 'v2'])}`
  const props = (): unknown => pick<unknown>([{ name: `N${Math.floor(rand() * 100)}` }, { age: Math.floor(rand() * 90) }, { name: 'X', email: 'x@y' },
    { id: 'reserved' }, { age: 'not a number' }, [1], { 'consent-reference': 'no' }, {}, { name: '\u00e9\ud83d\ude00' }, { name: 'a', nested: { deep: [1, { x: null }] } },
    { age: 1e21 }, { age: -0 }, { age: 1.5 }, { '': 1 }, { name: null }, { createdByHybrisClient: 'x' }, null, 'str', 5, { name: 'x'.repeat(5000) }])
  const ops: Op[] = []
  for (let i = 0; i < OPS; i++) {
    const r = rand()
    if (r < 0.25) ops.push({ method: 'PUT', path: `nodes/core/customer/${id()}`, headers: consent(), body: props() })
    else if (r < 0.33) ops.push({ method: 'PUT', path: `nodes/core/customer/${id()}/${pick(['name', 'age', 'email', 'id', '%C3%A9', 'created'])}`, headers: consent(), body: pick<unknown>(['V', 7, null, { a: 1 }, [1, 2], true]) })
    else if (r < 0.36) ops.push({ method: 'DELETE', path: `nodes/core/customer/${id()}/${pick(['name', 'age', 'nope'])}`, headers: consent() })
    else if (r < 0.42) ops.push({ method: 'PUT', path: `nodes/core/product/${id()}`, headers: consent(), body: { title: 'T', price: Math.floor(rand() * 10) } })
    else if (r < 0.52) ops.push({ method: 'PUT', path: `relations/${rel()}`, headers: consent(), body: pick<unknown>([{ lastSeen: 1 }, {}, { views: 'x' }, { fSchema: 1 }, { views: 3 }, [1]]) })
    else if (r < 0.56) ops.push({ method: 'PUT', path: `relations/${rel()}/${pick(['lastSeen', 'views', 'id'])}`, headers: consent(), body: pick<unknown>([1, 'x', null]) })
    else if (r < 0.68) ops.push({ method: 'POST', path: `counters/${rel()}/${pick(['views', 'views', 'id', 'other'])}`, headers: consent(), ...(rand() < 0.1 ? { body: { by: 2 } } : {}) })
    else if (r < 0.74) ops.push({ method: 'DELETE', path: `nodes/core/customer/${id()}`, ...(rand() < 0.3 ? { headers: consent() } : {}) })
    else if (r < 0.78) ops.push({ method: 'DELETE', path: `relations/${rel()}` })
    else if (r < 0.81) ops.push({ method: 'POST', path: 'consents', body: pick<unknown>([{ subject: 's' }, { subject: '' }, {}, { subject: 5 }, { subject: 's', extra: 1 }]) })
    else if (r < 0.84) ops.push({ method: 'DELETE', path: `consents/@${Math.floor(rand() * CONSENTS)}` })
    else if (r < 0.88) ops.push({ method: 'POST', path: `consents/@${Math.floor(rand() * CONSENTS)}/grant` })
    else if (r < 0.91) ops.push({ method: 'PUT', path: `consents/@${Math.floor(rand() * CONSENTS)}/revokedProperties`, body: pick<unknown>([['email'], [], 'x', ['name', 'name']]) })
    else if (r < 0.94) ops.push({ method: 'PUT', path: `nodes/core/customer/${pick(['%ZZ', '', 'x'.repeat(400), 'a/b/c'])}`, headers: consent(), body: { name: 'B' } })
    else if (r < 0.96) ops.push({ method: pick<Op['method']>(['POST', 'DELETE']), path: `nodes/core/customer/${id()}`, headers: consent(), body: { name: 'B' } })
    else ops.push({ method: 'PUT', path: `nodes/closed/thing/${id()}`, headers: consent(), body: pick<unknown>([{ label2: 'L' }, { other: 1 }]) })
  }
  // The first line is a JSON object either way: only then is a body NDJSON.
  return ops
}

/** The op with "@k" replaced by this server's k-th consent reference. */
function bind(op: Op, refs: readonly string[]): Op {
  const fill = (s: string): string => s.replace(/@(\d)/g, (_, k: string) => encodeURIComponent(refs[Number(k)]!))
  const headers = op.headers === undefined ? undefined : Object.fromEntries(Object.entries(op.headers).map(([k, v]) => [k, v.startsWith('@') ? refs[Number(v.slice(1))]! : v]))
  return { ...op, path: fill(op.path), ...(headers === undefined ? {} : { headers }) }
}

const TIME_KEYS = /^(created|changed|toCreated|fromCreated|relationCreated|time|modified|updated|scheduleAt|decayAt)$/

/** Replaces what a server makes up itself: its URL, its consent references (named in order of first sight), timestamps. */
class Normalizer {
  private readonly names = new Map<string, string>()
  constructor(private readonly url: string) {}

  value(v: unknown): unknown {
    if (typeof v === 'string') return this.text(v)
    if (Array.isArray(v)) return v.map((x) => this.value(x))
    if (typeof v === 'object' && v !== null) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, TIME_KEYS.test(k) && (typeof x === 'number' || k === 'scheduleAt' || k === 'decayAt') ? 'T' : this.value(x)]))
    }
    return v
  }

  private text(s: string): string {
    return s.split(this.url).join('URL').replace(/cr_[A-Za-z0-9_-]{22}/g, (ref) => {
      let name = this.names.get(ref)
      if (name === undefined) this.names.set(ref, (name = `REF${this.names.size}`))
      return name
    })
  }
}

async function exported(url: string, token: string, n: Normalizer): Promise<string[]> {
  const res = await call('GET', `${url}/graph/v1/demo/export`, { authorization: `Bearer ${token}` })
  return res.text.split('\n').filter((l) => l !== '').map((l) => JSON.stringify(n.value(JSON.parse(l)))).sort()
}

async function events(url: string, token: string, n: Normalizer): Promise<string[]> {
  const out: string[] = []
  let after = 0
  for (;;) {
    const page = (await call('GET', `${url}/graph/v1/demo/events?after=${after}&limit=1000`, { authorization: `Bearer ${token}` })).json<{ events: Record<string, unknown>[]; next: number }>()
    if (page.events.length === 0) return out
    after = page.next
    for (const e of page.events) out.push(JSON.stringify(n.value({ ...e, id: undefined, requestId: undefined })))
  }
}

t.test('single requests and bulk lines: same answers, same export, same events', async (t) => {
  const [one, two] = await Promise.all([serverForTest(t), serverForTest(t)])
  const tokens = [await getToken(one.server.url), await getToken(two.server.url)]
  const refs: string[][] = [[], []]
  const norms = [new Normalizer(one.server.url), new Normalizer(two.server.url)]
  // The same consents on both, named in the same order by both normalizers.
  for (let k = 0; k < CONSENTS; k++) {
    for (const [i, s] of [one, two].entries()) {
      const ref = await createConsent(s.server.url, 'demo', tokens[i]!, `subject-${k}`)
      refs[i]!.push(ref)
      norms[i]!.value(ref)
    }
  }
  const ops = randomOps(seeded(SEED))
  const singles: unknown[] = []
  for (const op of ops) singles.push(norms[0]!.value(await single(one.server.url, 'demo', tokens[0]!, bind(op, refs[0]!))))

  // Bulk: the ops in a few requests, malformed lines among them.
  const bulkAnswers: unknown[] = []
  const rand = seeded(SEED + 1)
  for (let from = 0; from < ops.length; from += 250) {
    const part = ops.slice(from, from + 250)
    const lines: string[] = []
    const isOp: boolean[] = []
    for (const [i, op] of part.entries()) {
      if (i > 0 && rand() < 0.05) {
        lines.push(`${['{"method":"PUT"', 'nonsense', '{"method":"PUT","path":5}', '[]'][Math.floor(rand() * 4)]}\n`)
        isOp.push(false)
      }
      lines.push(lineOf(bind(op, refs[1]!)))
      isOp.push(true)
    }
    const res = await bulk(two.server.url, 'demo', tokens[1]!, lines.join(''))
    t.equal(res.status, 200)
    t.equal(res.lines.length, lines.length, 'one answer line per line, no summary')
    for (const [i, answer] of res.lines.entries()) {
      if (isOp[i]) bulkAnswers.push(norms[1]!.value(answer))
      else if (answer.status !== 400) t.fail(`a malformed line was answered ${String(answer.status)}`)
    }
  }
  t.equal(bulkAnswers.length, singles.length)
  let differing = 0
  for (const [i, answer] of singles.entries()) {
    if (JSON.stringify(answer) === JSON.stringify(bulkAnswers[i])) continue
    // A path no route takes is a 404 alone and, like anything but a write route, a 405 on a bulk line.
    if (/no route for/.test(JSON.stringify(answer)) && (bulkAnswers[i] as { status: number }).status === 405) continue
    if (differing++ < 5) t.same(bulkAnswers[i], answer, `op ${i}: ${JSON.stringify(ops[i])}`)
  }
  t.equal(differing, 0, 'every answer is the same')
  const failures = singles.filter((a) => (a as { status: number }).status >= 400).length
  t.ok(failures > 30 && failures < OPS - 100, `${failures} of ${OPS} ops failed on purpose`)
  t.same(await exported(two.server.url, tokens[1]!, norms[1]!), await exported(one.server.url, tokens[0]!, norms[0]!), 'the same export')
  t.same(await events(two.server.url, tokens[1]!, norms[1]!), await events(one.server.url, tokens[0]!, norms[0]!), 'the same events, in the same order')
})
