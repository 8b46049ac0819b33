// limitHeapGrowth bounds how far a heap grows past what is live: one child
// process per setting keeps ~40 MB live and churns short-lived objects, and
// reports its heap's peak size.
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { ROOT } from '../helpers/server'

const MODULE = join(ROOT, 'dist', 'src', 'lifecycle', 'heap-growth.js')

const CHILD = `
const v8 = require('node:v8')
const percent = process.argv[1]
if (percent !== 'unset') require(${JSON.stringify(MODULE)}).limitHeapGrowth(Number(percent))
const live = []
for (let i = 0; i < 300000; i++) live.push({ i, s: ('live-' + i + '-').padEnd(60, 'x') })
const recent = []
let peak = 0
for (let round = 0; round < 400; round++) {
  const batch = []
  for (let j = 0; j < 10000; j++) batch.push({ j, s: 'churn-' + round + '-' + j })
  recent.push(batch)
  if (recent.length > 8) recent.shift()
  peak = Math.max(peak, v8.getHeapStatistics().total_heap_size)
}
// live is read last, so it stays live throughout.
process.stdout.write(peak + ' ' + live.length)
`

async function peakHeapMb(percent: string): Promise<number> {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', CHILD, percent], { timeout: 60_000 })
  const [peak, live] = stdout.split(' ').map(Number)
  if (live !== 300_000) throw new Error(`the child kept ${live} objects live`)
  return peak! / 1024 / 1024
}

t.test('30% keeps the heap well below what V8 grows it to on its own; 0 leaves V8 its own factor', async (t) => {
  const unset = await peakHeapMb('unset')
  const limited = await peakHeapMb('30')
  const zero = await peakHeapMb('0')
  t.comment(`peak heap: V8's own factor ${unset.toFixed(0)} MB, 30% ${limited.toFixed(0)} MB, 0 ${zero.toFixed(0)} MB`)
  // Measured on this machine: about two thirds of V8's own (250 against 163 MB; half under tap's coverage).
  t.ok(limited < unset * 0.8, `30% holds the heap under 80% of V8's own growth (${limited.toFixed(0)} < ${unset.toFixed(0)} MB)`)
  t.ok(zero > unset * 0.8, `0 sets no factor (${zero.toFixed(0)} MB against ${unset.toFixed(0)} MB)`)
})
