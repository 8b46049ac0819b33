// The validation of route inputs against their TypeBox schemas, with ajv,
// compiled once at start-up. Two keywords of our own keep the messages the
// API has always given (docs/design/contracts.md lists them):
//   x-check          names a check of the service (a length or reserved-name
//                    rule); it throws its own ApiError, so the message and
//                    type are exactly the check's.
//   x-error-message  on a schema's root: the 400 message when the value
//                    does not fit the schema.
//   x-rule           on a string schema: the words a field message says after
//                    the value when its pattern or length fails (fields()).
// fields() is the other way to read the result: the first bad field, for the
// callers that word their own per-field messages (the admin API, the
// bootstrap file).
import Ajv from 'ajv'
import type { TSchema } from '@sinclair/typebox'
import { ApiError } from '../core/errors'
import { firstFieldError, type FieldError } from './field-error'

export const CHECK = 'x-check'
export const ERROR_MESSAGE = 'x-error-message'
export const RULE = 'x-rule'

/** A check of one string: returns if it passes, throws the ApiError that says why not. */
export type Check = (value: string) => void

export type Validate = (value: unknown) => void

/** The first bad field of a value, or undefined when it fits. */
export type FieldCheck = (value: unknown) => FieldError | undefined

function withKeywords(ajv: Ajv, checks: Readonly<Record<string, Check>>): Ajv {
  ajv.addKeyword({
    keyword: CHECK,
    type: 'string',
    schemaType: 'string',
    errors: false,
    compile(name: string) {
      const check = checks[name]
      if (check === undefined) throw new Error(`schema names the unknown check "${name}"`)
      return (value: string) => {
        check(value)
        return true
      }
    },
  })
  ajv.addKeyword({ keyword: ERROR_MESSAGE, schemaType: 'string' })
  ajv.addKeyword({ keyword: RULE, schemaType: 'string' })
  // OpenAPI annotations the schemas carry for the document.
  ajv.addKeyword({ keyword: 'example' })
  return ajv
}

export class SchemaCompiler {
  private readonly ajv: Ajv
  /** Every error, with its schema, for fields(); patterns as JavaScript's own (no u flag), as the hand-written checks had them. */
  private readonly everyError: Ajv

  constructor(checks: Readonly<Record<string, Check>>) {
    this.ajv = withKeywords(new Ajv({ strict: true, allowUnionTypes: true, allErrors: false }), checks)
    this.everyError = withKeywords(new Ajv({ strict: true, allowUnionTypes: true, allErrors: true, verbose: true, unicodeRegExp: false }), checks)
  }

  /** Throws a 400 (or the check's ApiError) when the value does not fit; `what` names it in the fallback message. */
  compile(schema: TSchema, what: string): Validate {
    const fits = this.ajv.compile(schema)
    const message = (schema as Record<string, unknown>)[ERROR_MESSAGE]
    return (value) => {
      if (fits(value)) return
      throw new ApiError('bad_request', typeof message === 'string' ? message : `${what} ${this.ajv.errorsText(fits.errors, { dataVar: '' })}`)
    }
  }

  /** Whether a value fits: for a hot path whose caller says what a misfit means. */
  fits(schema: TSchema): (value: unknown) => boolean {
    const fits = this.ajv.compile(schema)
    return (value) => fits(value)
  }

  /** Compiles a schema whose failures the caller words itself, field by field (src/schema/field-error.ts). */
  fields(schema: TSchema): FieldCheck {
    const fits = this.everyError.compile(schema)
    return (value) => (fits(value) ? undefined : firstFieldError(fits.errors ?? [], schema, value))
  }
}

/** The compiler for schemas that name no check of a service (the admin API, the bootstrap file, the metamodel's values). */
export const SCHEMAS = new SchemaCompiler({})
