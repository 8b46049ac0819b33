// What the stderr relay makes of foreign output (src/telemetry/stderr-lines.ts).
import t from 'tap'
import { relayLines, wrapForeign } from '../../../src/telemetry/stderr-lines'

t.test('JSON lines and the start\'s error line pass; other text becomes one JSON line each', async (t) => {
  const json = '{"level":30,"time":1,"pid":7,"msg":"hello"}'
  const { out, rest } = relayLines('', `${json}\nerror: the data directory is locked\nplain text\n(node:7) Warning: something\n`, 7, false)
  const lines = out.trimEnd().split('\n')
  t.equal(rest, '', 'nothing held back')
  t.equal(lines[0], json, 'a JSON line as it was')
  t.equal(lines[1], 'error: the data directory is locked', 'the start\'s refusal as it was')
  t.same(JSON.parse(lines[2]!), { level: 50, time: JSON.parse(lines[2]!).time, pid: 7, stream: 'stderr', msg: 'plain text' })
  t.equal(JSON.parse(lines[3]!).msg, '(node:7) Warning: something')
})

t.test('text without a newline waits for the rest, or for a flush', async (t) => {
  const first = relayLines('', 'Write error: No space left on device position 8192, size 4096', 7, false)
  t.equal(first.out, '', 'a line begun is held')
  const second = relayLines(first.rest, '', 7, true)
  t.equal(second.rest, '')
  t.equal(JSON.parse(second.out).msg, 'Write error: No space left on device position 8192, size 4096', 'flushed as its own line')
  const glued = relayLines('Write error: x', '{"level":30}\n', 7, false)
  t.equal(JSON.parse(glued.out).msg, 'Write error: x{"level":30}', 'what arrives glued on one line stays one (valid) JSON line')
})

t.test('empty lines and carriage returns', async (t) => {
  t.equal(relayLines('', '\n\r\n  \n', 1, true).out, '', 'blank lines are dropped')
  t.equal(JSON.parse(relayLines('', 'dos\r\n', 1, false).out).msg, 'dos')
  t.match(wrapForeign('a "quoted"\tline', 3, 5), /^\{"level":50,"time":5,"pid":3,"stream":"stderr","msg":"a \\"quoted\\"\\tline"\}\n$/)
})
