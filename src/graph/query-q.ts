// Parses the list GET's single criterion (spec 4): `name:"John Smith"` for a
// string (letters, digits and white space inside the quotes) or
// `age:42` / `vip:true` for a number or boolean.
import { ApiError } from '../core/errors'
import type { Criterion } from '../contract/messages'

const STRING_FORM = /^([^:\s"]+):"([\p{L}\p{N}\s]*)"$/u
const NUMBER_FORM = /^([^:\s"]+):(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$/
const BOOLEAN_FORM = /^([^:\s"]+):(true|false)$/

export function parseCriterion(q: string): Criterion {
  const s = STRING_FORM.exec(q)
  if (s !== null) return { property: s[1]!, value: s[2]! }
  const n = NUMBER_FORM.exec(q)
  if (n !== null) {
    const value = Number(n[2])
    if (!Number.isFinite(value)) throw new ApiError('bad_request', `q: ${n[2]} is not a finite number`)
    return { property: n[1]!, value }
  }
  const b = BOOLEAN_FORM.exec(q)
  if (b !== null) return { property: b[1]!, value: b[2] === 'true' }
  throw new ApiError(
    'bad_request',
    'q must be one criterion: <property>:"<letters, digits and spaces>" or <property>:<number> (for example name:"John Smith" or age:42)',
  )
}
