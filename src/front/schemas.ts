// The validation of route inputs against their TypeBox schemas, with ajv,
// compiled once at start-up. Two keywords of our own keep the messages the
// API has always given (docs/contracts.md lists them):
//   x-check          names a check of the service (a length or reserved-name
//                    rule); it throws its own ApiError, so the message and
//                    type are exactly the check's.
//   x-error-message  on a schema's root: the 400 message when the value
//                    does not fit the schema.
import Ajv from 'ajv'
import type { TSchema } from '@sinclair/typebox'
import { ApiError } from '../errors'

export const CHECK = 'x-check'
export const ERROR_MESSAGE = 'x-error-message'

/** A check of one string: returns if it passes, throws the ApiError that says why not. */
export type Check = (value: string) => void

export type Validate = (value: unknown) => void

export class SchemaCompiler {
  private readonly ajv: Ajv

  constructor(checks: Readonly<Record<string, Check>>) {
    this.ajv = new Ajv({ strict: true, allErrors: false })
    this.ajv.addKeyword({
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
    this.ajv.addKeyword({ keyword: ERROR_MESSAGE, schemaType: 'string' })
    // OpenAPI annotations the schemas carry for the document.
    this.ajv.addKeyword({ keyword: 'example' })
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
}
