// Bounds the shape of a JSON request body before anything parses it: a body
// nested thousands of levels deep overflows the stack wherever it is walked
// recursively later (JSON.parse, structured clone to an actor), and a body of
// a million tiny elements costs far more than its bytes. One linear scan of
// the bytes, no recursion: brackets outside strings set the depth, commas and
// the first item of each container count the elements (array items and
// object members, plus the body's own value).
import { ApiError } from '../core/errors'

export interface JsonLimits {
  maxDepth: number
  maxElements: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_ARRAY = 0x5b
const CLOSE_ARRAY = 0x5d
const OPEN_OBJECT = 0x7b
const CLOSE_OBJECT = 0x7d

const isSpace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09

/**
 * Throws 400 naming the limit when the body nests deeper than `maxDepth` or
 * holds more than `maxElements` elements. Malformed JSON is left to the parser
 * (a stray byte is counted conservatively, never skipped). Returns the depth
 * and element count found, for a caller that bounds a part of the body.
 */
export function checkJsonLimits(body: Uint8Array, limits: JsonLimits): JsonLimits {
  let depth = 0
  let deepest = 0
  let elements = 0
  let inString = false
  let escaped = false
  // Just after an opening bracket: the next significant byte tells whether the container has an item.
  let afterOpen = false
  let sawValue = false
  for (let i = 0; i < body.length; i++) {
    const b = body[i]!
    if (inString) {
      if (escaped) escaped = false
      else if (b === BACKSLASH) escaped = true
      else if (b === QUOTE) inString = false
      continue
    }
    if (isSpace(b)) continue
    if (!sawValue) {
      sawValue = true
      elements = 1
    }
    if (afterOpen) {
      afterOpen = false
      if (b !== CLOSE_ARRAY && b !== CLOSE_OBJECT) elements++
    }
    if (b === QUOTE) inString = true
    else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > deepest) deepest = depth
      if (depth > limits.maxDepth) {
        throw new ApiError('bad_request', `the JSON body is nested deeper than ${limits.maxDepth} levels (the limit, --max-json-depth)`)
      }
      afterOpen = true
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      if (depth > 0) depth--
    } else if (b === COMMA) elements++
    if (elements > limits.maxElements) {
      throw new ApiError('bad_request', `the JSON body has more than ${limits.maxElements} elements (the limit, --max-json-elements)`)
    }
  }
  return { maxDepth: deepest, maxElements: elements }
}
