// tuneHeap's two settings, each in child processes that keep ~40 MB live,
// churn objects and report their heap's peak size: the growth factor bounds
// how far a heap grows past what is live, and pretenuring off keeps
// short-lived objects out of the old generation.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { ROOT } from '../../helpers/server'

const MODULE = join(ROOT, 'dist', 'src', 'start', 'v8-heap.js')

// argv: the setting ('v8': V8's defaults, no call; 'growth-only': V8's own factor, turnOffPretenuring alone; else
// tuneHeap(percent)), and how many batches of 10,000 churned objects stay reachable.
const CHILD = `
const v8 = require('node:v8')
const [setting, keptBatches] = [process.argv[1], Number(process.argv[2])]
if (setting === 'growth-only') require(${JSON.stringify(MODULE)}).turnOffPretenuring()
else if (setting !== 'v8') require(${JSON.stringify(MODULE)}).tuneHeap(Number(setting))
const live = []
for (let i = 0; i < 300000; i++) live.push({ i, s: ('live-' + i + '-').padEnd(60, 'x') })
const recent = []
let peak = 0
for (let round = 0; round < 400; round++) {
  const batch = []
  for (let j = 0; j < 10000; j++) batch.push({ j, s: 'churn-' + round + '-' + j })
  recent.push(batch)
  if (recent.length > keptBatches) recent.shift()
  peak = Math.max(peak, v8.getHeapStatistics().total_heap_size)
}
// live is read last, so it stays live throughout.
process.stdout.write(peak + ' ' + live.length)
`

async function peakHeapMb(setting: string, keptBatches: number): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', CHILD, setting, String(keptBatches)], { timeout: 60_000 })
  const [peak, live] = stdout.split(' ').map(Number)
  if (live !== 300_000) throw new Error(`the child kept ${live} objects live`)
  return peak! / 1024 / 1024
}

t.test('growth: 30% keeps the heap well below what V8 grows it to on its own; 0 leaves V8 its own factor', async (t) => {
  // 40 batches live long enough to be promoted, then die in the old generation.
  const own = await peakHeapMb('growth-only', 40)
  const limited = await peakHeapMb('30', 40)
  const zero = await peakHeapMb('0', 40)
  t.comment(`peak heap: V8's own factor ${own.toFixed(0)} MB, 30% ${limited.toFixed(0)} MB, 0 ${zero.toFixed(0)} MB`)
  // Measured on this machine: 409 MB against 251 MB.
  t.ok(limited < own * 0.8, `30% holds the heap under 80% of V8's own growth (${limited.toFixed(0)} < ${own.toFixed(0)} MB)`)
  t.ok(zero > own * 0.8, `0 sets no factor (${zero.toFixed(0)} MB against ${own.toFixed(0)} MB)`)
})

t.test('pretenuring off: objects that die young are not allocated in the old generation', async (t) => {
  // 8 batches die young, but V8's pretenuring sends their allocation site to the old generation.
  const v8Defaults = await peakHeapMb('v8', 8)
  const tuned = await peakHeapMb('0', 8)
  t.comment(`peak heap: V8's defaults ${v8Defaults.toFixed(0)} MB, pretenuring off ${tuned.toFixed(0)} MB`)
  // Measured on this machine: 368 MB against 124 MB.
  t.ok(tuned < v8Defaults * 0.6, `pretenuring off holds the heap under 60% of V8's defaults (${tuned.toFixed(0)} < ${v8Defaults.toFixed(0)} MB)`)
})
