// Reading the JSON bodies of the admin API (and the bootstrap file's entries
// that follow its rules) against TypeBox schemas with the one schema compiler
// (src/schema/compiler.ts): the first bad field is a 400 naming it, worded as
// the API always has (`bad_request` for a wrong shape, `validation_violation`
// for a value that breaks a rule). The builders below make the fields; lists
// and booleans given as null read as absent.
import { Type, type Static, type TSchema, type TString, type TUnsafe } from '@sinclair/typebox'
import { ApiError } from '../../core/errors'
import { parseJsonText } from '../../http/parse-json'
import { RULE, SCHEMAS } from '../../schema/compiler'
import { fieldName, type FieldError, type Segment } from '../../schema/field-error'

/** What an id, tenant, organization, role or scope may be: one scope-token (RFC 6749 3.3), at most 128 characters. */
export const NAME = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/
const TEXT = /^[^\x00-\x1f\x7f]{1,256}$/
/** The URI accepted by the admin API for any text field: printable, bounded. */
export const URI = /^[\x21-\x7e]{1,2048}$/

/** Why a string is not a name (said after the value). */
export const NAME_RULE = 'is not acceptable: one word of visible ASCII (no quotes or backslashes), at most 128 characters'
/**
 * What a tenant id may be: a name other than "__proto__". A user's roles are
 * kept per tenant as an object's keys, which msgpack (the auth store's values)
 * reads back as "__proto_" for that one: the roles would land in another tenant.
 */
export const TENANT_ID = new RegExp(`^(?!__proto__$)${NAME.source.slice(1)}`)
export const TENANT_ID_RULE = `${NAME_RULE}, other than "__proto__"`
const TEXT_RULE = 'is not acceptable: 1 to 256 characters, no control characters'

export const violation = (message: string): ApiError => new ApiError('validation_violation', message)
const shape = (message: string): ApiError => new ApiError('bad_request', message)

type Words = { description?: string; example?: unknown }

/** A string field matching `pattern` (a name by default); `rule` says why a value does not. */
export const field = (words: Words = {}, pattern: RegExp = NAME, rule = NAME_RULE): TString =>
  Type.String({ pattern: pattern.source, [RULE]: rule, ...words })

/** A text field: 1 to 256 characters, no control characters. */
export const text = (words: Words = {}): TString => field(words, TEXT, TEXT_RULE)

/** A list of strings matching `pattern` (names by default); null reads as empty. */
export const list = (words: Words = {}, pattern: RegExp = NAME): TUnsafe<string[] | null> =>
  Type.Unsafe<string[] | null>({ type: ['array', 'null'], items: Type.String({ pattern: pattern.source, [RULE]: 'is not acceptable' }), ...words })

/** A list of objects; null reads as empty. */
export const objects = <T extends TSchema>(item: T, words: Words = {}): TUnsafe<Static<T>[] | null> =>
  Type.Unsafe<Static<T>[] | null>({ type: ['array', 'null'], items: item, ...words })

/** true or false; null reads as absent. */
export const flag = (words: Words = {}): TUnsafe<boolean | null> => Type.Unsafe<boolean | null>({ type: ['boolean', 'null'], ...words })

/** An object whose keys are names and whose values are lists of names (roles per tenant). */
export const nameLists = (words: Words = {}): TUnsafe<Record<string, string[] | null>> =>
  Type.Unsafe<Record<string, string[] | null>>({ type: 'object', propertyNames: { type: 'string', pattern: NAME.source }, additionalProperties: list(), ...words })

/** A nameLists value with its null lists read as empty. */
export function listsOf(given: Readonly<Record<string, string[] | null>>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(given).map(([key, names]) => [key, names ?? []]))
}

const nameOf = (root: string, path: readonly Segment[]): string => fieldName(root, path, 'the body')

const firstType = (schema: FieldError['schema']): unknown => (Array.isArray(schema.type) ? schema.type[0] : schema.type)

function shapeWords(schema: FieldError['schema']): string {
  switch (firstType(schema)) {
    case 'boolean': return 'must be true or false'
    case 'object': return 'must be a JSON object'
    case 'array': return firstType((schema.items ?? {}) as FieldError['schema']) === 'object' ? 'must be an array of objects' : 'must be an array of strings'
    default: return 'must be a string'
  }
}

/** The 400 of the admin API for the first bad field under `root` ('' for a body). */
export function fieldProblem(e: FieldError, root: string): ApiError {
  if (e.kind === 'key') return violation(`${nameOf(root, e.path.slice(0, -1))} key "${String(e.value)}" is not acceptable`)
  const name = nameOf(root, e.path)
  if (e.kind === 'shape') return shape(`${name} ${shapeWords(e.schema)}`)
  return violation(`${name} "${String(e.value)}" ${String(e.schema[RULE] ?? 'is not acceptable')}`)
}


/** Checks a value found under `root` (a bootstrap file's entry) and returns it typed, or throws the field's 400. */
export function fieldsReader<T extends TSchema>(schema: T): (value: unknown, root: string) => Static<T> {
  const check = SCHEMAS.fields(schema)
  return (value, root) => {
    const problem = check(value)
    if (problem !== undefined) throw fieldProblem(problem, root)
    return value as Static<T>
  }
}

/** Parses and checks a request body: the typed value, or the first bad field's 400. */
export function bodyReader<T extends TSchema>(schema: T): (body: Buffer | undefined) => Static<T> {
  const read = fieldsReader(schema)
  return (body) => {
    let doc: unknown
    try {
      doc = parseJsonText(body ?? Buffer.alloc(0))
    } catch {
      throw shape('the body must be a JSON object')
    }
    return read(doc, '')
  }
}
