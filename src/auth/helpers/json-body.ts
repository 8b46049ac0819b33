// Reading the JSON bodies of the admin API: every field is checked, and a
// bad one is a 400 naming it (`validation_violation` for a value that breaks
// a rule, `bad_request` for a wrong shape).
import { ApiError } from '../../errors'

/** What an id, tenant, organization, role or scope may be: one scope-token (RFC 6749 3.3), at most 128 characters. */
export const NAME = /^[\x21\x23-\x5b\x5d-\x7e]{1,128}$/
const TEXT = /^[^\x00-\x1f\x7f]{1,256}$/

const shape = (message: string): ApiError => new ApiError('bad_request', message)
export const violation = (message: string): ApiError => new ApiError('validation_violation', message)

export class JsonFields {
  private constructor(private readonly o: Record<string, unknown>, private readonly path: string) {}

  static parse(body: Buffer | undefined): JsonFields {
    let doc: unknown
    try {
      doc = JSON.parse(body?.toString('utf8') ?? '')
    } catch {
      throw shape('the body must be a JSON object')
    }
    return JsonFields.of(doc, '')
  }

  static of(doc: unknown, path: string): JsonFields {
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw shape(`${path === '' ? 'the body' : path} must be a JSON object`)
    return new JsonFields(doc as Record<string, unknown>, path)
  }

  private name(field: string): string {
    return this.path === '' ? field : `${this.path}.${field}`
  }

  has(field: string): boolean {
    return this.o[field] !== undefined
  }

  /** Whether the field is given as null (clearing a value). */
  isNull(field: string): boolean {
    return this.o[field] === null
  }

  /** A string matching `pattern` (a name by default). */
  string(field: string, pattern: RegExp = NAME): string {
    const v = this.o[field]
    if (typeof v !== 'string') throw shape(`${this.name(field)} must be a string`)
    if (!pattern.test(v)) throw violation(`${this.name(field)} "${v}" is not acceptable: ${pattern === TEXT ? '1 to 256 characters, no control characters' : 'one word of visible ASCII (no quotes or backslashes), at most 128 characters'}`)
    return v
  }

  text(field: string): string {
    return this.string(field, TEXT)
  }

  optionalString(field: string, pattern: RegExp = NAME): string | undefined {
    return this.o[field] === undefined ? undefined : this.string(field, pattern)
  }

  boolean(field: string): boolean {
    const v = this.o[field] ?? false
    if (typeof v !== 'boolean') throw shape(`${this.name(field)} must be true or false`)
    return v
  }

  strings(field: string, pattern: RegExp = NAME): string[] {
    const v = this.o[field] ?? []
    if (!Array.isArray(v)) throw shape(`${this.name(field)} must be an array of strings`)
    return v.map((x, i) => {
      if (typeof x !== 'string') throw shape(`${this.name(field)}[${i}] must be a string`)
      if (!pattern.test(x)) throw violation(`${this.name(field)}[${i}] "${x}" is not acceptable`)
      return x
    })
  }

  object(field: string): JsonFields {
    return JsonFields.of(this.o[field], this.name(field))
  }

  objects(field: string): JsonFields[] {
    const v = this.o[field] ?? []
    if (!Array.isArray(v)) throw shape(`${this.name(field)} must be an array of objects`)
    return v.map((x, i) => JsonFields.of(x, `${this.name(field)}[${i}]`))
  }

  /** An object whose keys are names and whose values are arrays of names. */
  nameLists(field: string): Record<string, string[]> {
    const o = this.object(field)
    const out: Record<string, string[]> = {}
    for (const key of Object.keys(o.o)) {
      if (!NAME.test(key)) throw violation(`${this.name(field)} key "${key}" is not acceptable`)
      out[key] = o.strings(key)
    }
    return out
  }
}

/** The URI accepted by the admin API for any text field: printable, bounded. */
export const URI = /^[\x21-\x7e]{1,2048}$/
