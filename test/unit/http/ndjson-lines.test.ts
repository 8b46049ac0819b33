// The NDJSON splitter of streamed bodies: lines across chunk borders, blank
// lines, CRLF, a last line without "\n", and lines over the limit dropped as
// they stream and reported with their numbers.
import t from 'tap'
import { NdjsonLines, type SplitLine } from '../../../src/http/ndjson-lines'

/** Every line the chunks split into (the body ended after the last chunk), as text or 'oversized'. */
function split(chunks: string[], maxLine = 100): [number, string][] {
  const lines = new NdjsonLines(maxLine)
  const out: [number, string][] = []
  const take = (): void => {
    for (let l: SplitLine | undefined = lines.next(); l !== undefined; l = lines.next()) {
      out.push([l.number, l.kind === 'line' ? l.bytes.toString() : 'oversized'])
    }
  }
  for (const c of chunks) {
    lines.push(Buffer.from(c))
    take()
  }
  lines.end()
  take()
  if (!lines.exhausted) throw new Error('not exhausted at the end')
  return out
}

t.test('lines split across chunks, in order, numbered from 1', async (t) => {
  t.same(split(['{"a":1}\n{"b"', ':2}\n', '{"c":3}\n']), [[1, '{"a":1}'], [2, '{"b":2}'], [3, '{"c":3}']])
  t.same(split(['{"a"', ':1', '}\n']), [[1, '{"a":1}']])
})

t.test('a last line without a newline is a line', async (t) => {
  t.same(split(['{"a":1}\n{"b":2}']), [[1, '{"a":1}'], [2, '{"b":2}']])
})

t.test('blank lines are skipped but counted; CRLF ends a line', async (t) => {
  t.same(split(['\n{"a":1}\r\n  \r\n\n{"b":2}\r\n']), [[2, '{"a":1}'], [5, '{"b":2}']])
})

t.test('an empty body has no lines', async (t) => {
  t.same(split([]), [])
  t.same(split(['']), [])
  t.same(split(['\n\n']), [])
})

t.test('a line over the limit is oversized, whole in one chunk or streamed across many', async (t) => {
  const long = 'x'.repeat(150)
  t.same(split([`{"a":1}\n${long}\n{"b":2}\n`]), [[1, '{"a":1}'], [2, 'oversized'], [3, '{"b":2}']])
  t.same(split(['{"a":1}\n', long.slice(0, 60), long.slice(60, 120), long.slice(120), '\n{"b":2}\n']), [[1, '{"a":1}'], [2, 'oversized'], [3, '{"b":2}']])
  t.same(split([long.repeat(3)]), [[1, 'oversized']], 'the body ends inside the long line')
  t.same(split(['x'.repeat(100), '\n']), [[1, 'x'.repeat(100)]], 'the limit itself passes')
})

t.test('a long line does not stay in memory: only the tail after it is kept', async (t) => {
  const lines = new NdjsonLines(10)
  for (let i = 0; i < 1000; i++) lines.push(Buffer.alloc(1000, 0x61))
  t.same(lines.next(), undefined, 'nothing to take before the line ends')
  lines.push(Buffer.from('\n{}\n'))
  t.same(lines.next(), { kind: 'oversized', number: 1 })
  const next = lines.next()
  t.equal(next?.kind === 'line' ? next.bytes.toString() : '', '{}')
})

t.test('lines not taken wait for the next call (a paused consumer)', async (t) => {
  const lines = new NdjsonLines(100)
  lines.push(Buffer.from('{"a":1}\n{"b":2}\n{"c"'))
  const first = lines.next()
  t.equal(first?.kind === 'line' ? first.bytes.toString() : '', '{"a":1}')
  lines.push(Buffer.from(':3}\n'))
  const rest: string[] = []
  for (let l = lines.next(); l !== undefined; l = lines.next()) rest.push(l.kind === 'line' ? l.bytes.toString() : 'oversized')
  t.same(rest, ['{"b":2}', '{"c":3}'])
})
