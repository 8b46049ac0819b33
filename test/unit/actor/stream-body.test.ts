// A stream's slices as text (workers/actor/stream-body.ts): whatever the
// slicing, the slices joined are one JSON array or one item per line.
import t from 'tap'
import { StreamBody } from '../../../workers/actor/stream-body'

const items = ['{"id":"1"}', '{"id":"2"}', '{"id":"✓"}']

function render(format: 'json' | 'ndjson', slices: string[][]): string {
  const body = new StreamBody(format)
  return slices.map((s, i) => body.slice(s, i === slices.length - 1)).join('')
}

t.test('JSON: one array whatever the slices, empty slices included', async (t) => {
  for (const slices of [[items], [[items[0]!], [], [items[1]!, items[2]!]], [[], items.slice(0, 2), [items[2]!], []], [[], [items[0]!, items[1]!, items[2]!]]]) {
    t.same(JSON.parse(render('json', slices)), items.map((i) => JSON.parse(i)), JSON.stringify(slices))
  }
  t.equal(render('json', [[]]), '[]', 'nothing: an empty array')
  t.equal(render('json', [[], []]), '[]')
})

t.test('NDJSON: one item per line', async (t) => {
  t.equal(render('ndjson', [[items[0]!], [], [items[1]!, items[2]!]]), items.join('\n') + '\n')
  t.equal(render('ndjson', [[]]), '', 'nothing: an empty body')
})

t.test('a slice is one flat string, non-ASCII kept', async (t) => {
  const text = new StreamBody('json').slice(['"✓"', '{"a":1}'], true)
  t.equal(text, '["✓",{"a":1}]')
  t.equal(Buffer.byteLength(text), text.length + 2, 'written as UTF-8 by the front thread')
})
