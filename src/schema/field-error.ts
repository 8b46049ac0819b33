// Which field ajv's errors (allErrors, verbose) name first, in the order a
// reader walking the value meets them: an object's fields in the order its
// schema declares them, array items by index, a record's entries in the
// value's own key order (an entry's key before its value); within one field,
// a wrong type, then emptiness, then the rest. So the message is always about
// the same field and the same fault, whatever ajv checked first.
import type { ErrorObject } from 'ajv'
import { own } from '../model/own-key'

export type Segment = string | number

export interface FieldError {
  /** shape: absent or of the wrong JSON type; rule: the value breaks its pattern, length or list; key: a record's key breaks its rule */
  kind: 'shape' | 'rule' | 'key'
  /** the keys and indexes from the root to the field (for a key, to its entry) */
  path: Segment[]
  /** the keyword that failed (type, required, pattern, maxLength, ...) */
  keyword: string
  /** the schema of the field (for a key, of the record) */
  schema: Readonly<Record<string, unknown>>
  value: unknown
}

type Schema = Readonly<Record<string, unknown>>
/** Keywords that only gather the errors of their parts. */
const GATHERING = new Set(['allOf', 'anyOf', 'oneOf', 'if', 'not'])
const SHAPE = new Set(['type', 'required'])

function pointer(instancePath: string): string[] {
  return instancePath === '' ? [] : instancePath.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
}

function entrySchema(schema: Schema | undefined, key: string): Schema | undefined {
  const declared = own(schema?.properties as Record<string, Schema> | undefined, key)
  if (declared !== undefined) return declared
  const patterns = schema?.patternProperties as Record<string, Schema> | undefined
  return patterns === undefined ? (schema?.additionalProperties as Schema | undefined) : Object.values(patterns)[0]
}

interface Located { path: Segment[]; rank: number[]; schema: Schema | undefined; value: unknown }

/** Walks `keys` down the value and its schema; each step's rank orders it among its siblings. */
function locate(root: Schema, data: unknown, keys: readonly string[]): Located {
  const at: Located = { path: [], rank: [], schema: root, value: data }
  for (const key of keys) {
    if (Array.isArray(at.value)) {
      const i = Number(key)
      at.path.push(i)
      at.rank.push(i)
      at.schema = at.schema?.items as Schema | undefined
      at.value = at.value[i]
      continue
    }
    const declared = Object.keys((at.schema?.properties ?? {}) as Schema)
    const given = Object.keys((at.value ?? {}) as object)
    at.path.push(key)
    at.rank.push(declared.includes(key) ? declared.indexOf(key) : declared.length + given.indexOf(key))
    at.schema = entrySchema(at.schema, key)
    at.value = own(at.value as Record<string, unknown> | undefined, key)
  }
  return at
}

/** Within one field (a last rank below its children's): a wrong type or absence, then an empty string, then any other rule. */
const fault = (keyword: string): number => (SHAPE.has(keyword) ? -1 : keyword === 'minLength' ? -0.75 : -0.5)

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!
  return a.length - b.length
}

function fieldOf(e: ErrorObject, root: Schema, data: unknown): { rank: number[]; error: FieldError } | undefined {
  if (GATHERING.has(e.keyword) || e.schemaPath.includes('/propertyNames/')) return undefined
  const keys = pointer(e.instancePath)
  if (e.keyword === 'propertyNames') {
    const at = locate(root, data, [...keys, String(e.params.propertyName)])
    // The key is read before its value.
    at.rank[at.rank.length - 1]! -= 0.5
    return { rank: at.rank, error: { kind: 'key', path: at.path, keyword: e.keyword, schema: e.parentSchema ?? {}, value: e.params.propertyName } }
  }
  if (e.keyword === 'required') {
    const at = locate(root, data, [...keys, String(e.params.missingProperty)])
    return { rank: [...at.rank, fault(e.keyword)], error: { kind: 'shape', path: at.path, keyword: e.keyword, schema: at.schema ?? {}, value: undefined } }
  }
  const at = locate(root, data, keys)
  return { rank: [...at.rank, fault(e.keyword)], error: { kind: SHAPE.has(e.keyword) ? 'shape' : 'rule', path: at.path, keyword: e.keyword, schema: e.parentSchema ?? {}, value: at.value } }
}

/** The error of the field met first; within one field, by fault (then in ajv's order). */
export function firstFieldError(errors: readonly ErrorObject[], root: object, data: unknown): FieldError {
  let first: { rank: number[]; error: FieldError } | undefined
  for (const e of errors) {
    const found = fieldOf(e, root as Schema, data)
    if (found !== undefined && (first === undefined || compare(found.rank, first.rank) < 0)) first = found
  }
  if (first === undefined) throw new Error(`no field error among ${JSON.stringify(errors)}`)
  return first.error
}

/** How a field is named in a message: `provider.id`, `includedServices[0].name` under `root`; `whole` names the root itself. */
export function fieldName(root: string, path: readonly Segment[], whole: string): string {
  let name = root
  for (const s of path) name = typeof s === 'number' ? `${name}[${s}]` : name === '' ? s : `${name}.${s}`
  return name === '' ? whole : name
}
