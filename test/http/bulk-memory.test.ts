// A bulk body far larger than what the server may hold streams through
// without the server's private memory growing with it: the body is read no
// faster than lines are answered, and answered lines are let go. The peak
// after a warm-up stays within 80 MB of the warm-up's (runs here grew 33 to
// 48 MB, mostly the threads' heaps between collections; the bound leaves
// room for a loaded machine), with twice that streamed through.
import t from 'tap'
import { bulk, lineOf } from '../helpers/bulk'
import { serverForFile } from '../helpers/server'
import { MemorySampler } from '../../bench/proc'

const fixture = serverForFile(t)
/** ~2 KiB per line, ids repeating (the data set stays small), ~160 MB in all. */
const LINES = 80_000
const IDS = 2_000
const FILLER = 'z'.repeat(2_000)

function* lines(consent: string, n: number): Generator<string> {
  for (let i = 0; i < n; i++) yield lineOf({ method: 'PUT', path: `nodes/core/customer/m${i % IDS}`, headers: { 'consent-reference': consent }, body: { name: `M${i}`, note: FILLER } })
}

t.test('memory stays flat while a body many times its growth streams through', async (t) => {
  const { server, token, consent } = fixture
  // Warm-up: every id written once, caches and heaps at their working size.
  const warm = await bulk(server.url, 'demo', token, lines(consent, IDS * 2), '?answers=errors')
  t.same(warm.lines, [{ done: IDS * 2, failed: 0 }])
  const memory = new MemorySampler(server.pid, 100)
  t.teardown(() => memory.stop())
  const before = memory.newWindow()
  const res = await bulk(server.url, 'demo', token, lines(consent, LINES), '?answers=errors')
  const peak = memory.newWindow()
  t.same(res.lines, [{ done: LINES, failed: 0 }])
  const bodyMb = LINES * (FILLER.length + 150) / 2 ** 20
  t.ok(peak - before < 80, `private memory ${Math.round(before)} MB before, peak ${Math.round(peak)} MB while ${Math.round(bodyMb)} MB streamed through`)
})
