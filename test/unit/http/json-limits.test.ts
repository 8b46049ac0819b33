import t from 'tap'
import { ApiError } from '../../../src/core/errors'
import { checkJsonLimits } from '../../../src/http/json-limits'

const limits = { maxDepth: 4, maxElements: 10 }
const check = (text: string, l = limits) => checkJsonLimits(Buffer.from(text), l)
/** The 400's message, or 'passed'. */
const refusal = (text: string, l = limits): string => {
  try {
    check(text, l)
    return 'passed'
  } catch (err) {
    return err instanceof ApiError && err.status === 400 ? err.message : `unexpected ${String(err)}`
  }
}

t.test('depth: the limit itself passes, one more fails naming the limit', async (t) => {
  check('[[[[1]]]]')
  check('{"a":{"b":{"c":{"d":1}}}}')
  t.match(refusal('[[[[[1]]]]]'), /deeper than 4 levels.*--max-json-depth/)
  t.match(refusal('{"a":[{"b":[{"c":1}]}]}'), /deeper than 4/)
})

t.test('the attack body: thousands of levels, rejected without recursion', async (t) => {
  const deep = '{"a":'.repeat(3325) + '1' + '}'.repeat(3325)
  t.match(refusal(deep, { maxDepth: 64, maxElements: 100_000 }), /deeper than 64/)
  const unclosed = '['.repeat(1_000_000)
  t.match(refusal(unclosed, { maxDepth: 64, maxElements: 100_000 }), /deeper than 64/)
})

t.test('brackets, commas and quotes inside strings do not count', async (t) => {
  check('{"a":"[[[[[[[[,,,,,,,,,,,,,,,{{{{{{"}')
  check('["\\"[[[[[[[[[[", "\\\\"]')
  t.match(refusal('["\\\\",[[[[1]]]]]', limits), /deeper/)
})

t.test('elements: array items and object members plus the body itself', async (t) => {
  check('[1,2,3,4,5,6,7,8,9]') // 9 items + the array = 10
  t.match(refusal('[1,2,3,4,5,6,7,8,9,10]'), /more than 10 elements.*--max-json-elements/)
  check('{"a":1,"b":2,"c":[],"d":{}}') // 4 members + the object = 5
  check('[]')
  check('  "scalar"  ')
  check('[[1],[2],[3],[4]]') // 4 + 4 + 1 = 9
  t.match(refusal('[[1],[2],[3],[4],[5]]'), /more than 10/) // 5 + 5 + 1 = 11
})

t.test('multibyte text is scanned byte-wise without confusion', async () => {
  check('{"name":"Zoë ☃ [{"}')
})

t.test('what passes is measured: the deepest level and the elements', async (t) => {
  t.same(check('{"a":[1,[2]],"b":{}}'), { maxDepth: 3, maxElements: 6 })
  t.same(check('7'), { maxDepth: 0, maxElements: 1 })
})
