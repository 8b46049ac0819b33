// A stream's slices as bytes (workers/actor/stream-body.ts): whatever the
// slicing, the bytes joined are one JSON array or one item per line.
import t from 'tap'
import { StreamBody, transferable } from '../../workers/actor/stream-body'

const items = ['{"id":"1"}', '{"id":"2"}', '{"id":"✓"}']

function render(format: 'json' | 'ndjson', slices: string[][]): string {
  const body = new StreamBody(format)
  return slices.map((s, i) => Buffer.from(body.slice(s, i === slices.length - 1)).toString()).join('')
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

t.test('the bytes are UTF-8 in a buffer of their own, so they can be transferred', async (t) => {
  const bytes = new StreamBody('json').slice(['"✓"'], true)
  t.equal(Buffer.from(bytes).toString(), '["✓"]')
  t.equal(transferable(bytes), bytes.buffer)
  t.equal(transferable(new Uint8Array(new ArrayBuffer(8), 2, 4)), undefined, 'a view of a larger buffer is copied, not moved')
})
