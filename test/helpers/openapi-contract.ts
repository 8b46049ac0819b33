// Holds a running server's answers to its own GET /openapi.json: each
// answer's status must be one the operation declares, with the headers and
// a body (per media type) its schema for that status allows. Records which
// operations were exercised, so a test can fail on one left out.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020'
import type { Dispatcher } from 'undici'
import { CHECK, ERROR_MESSAGE } from '../../src/http/schemas'
import { call, type Answer, type Headers } from './client'

interface MediaObject { schema?: object }
interface ResponseObject { content?: Record<string, MediaObject>; headers?: Record<string, { required?: boolean }> }
interface Operation { operationId: string; responses: Record<string, ResponseObject> }
export interface Document { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object> } }

/** One request against an operation: `op` is "METHOD /path/{template}" as the document names it. */
export interface Case {
  op: string
  url: string
  headers?: Headers
  body?: string
}

export class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true })
  private readonly validators = new Map<string, ValidateFunction>()
  readonly exercised = new Set<string>()

  constructor(readonly doc: Document) {
    this.ajv.addKeyword({ keyword: CHECK })
    this.ajv.addKeyword({ keyword: ERROR_MESSAGE })
    // The responses' $refs point into the document: it is a schema of its own, by this id.
    this.ajv.addSchema({ $id: 'doc', components: doc.components })
  }

  /** Every operation of the document whose path starts with `prefix`, as "METHOD /path". */
  operations(prefix: string): string[] {
    return Object.entries(this.doc.paths).filter(([path]) => path.startsWith(prefix))
      .flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`))
  }

  private operation(op: string): Operation {
    const [method, path] = op.split(' ') as [string, string]
    const found = this.doc.paths[path]?.[method.toLowerCase()]
    if (found === undefined) throw new Error(`${op} is not in the document`)
    return found
  }

  private validator(key: string, schema: object): ValidateFunction {
    let v = this.validators.get(key)
    if (v === undefined) {
      v = this.ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as object)
      this.validators.set(key, v)
    }
    return v
  }

  /** What the document does not allow of `answer` to `op` (empty: it is allowed). */
  problems(op: string, method: string, answer: Answer): string[] {
    const declared = this.operation(op).responses[String(answer.status)]
    if (declared === undefined) return [`status ${answer.status} is not declared (${answer.text.slice(0, 200)})`]
    const out: string[] = []
    for (const [name, h] of Object.entries(declared.headers ?? {})) {
      if (h.required === true && answer.headers[name] === undefined) out.push(`${answer.status}: header ${name} missing`)
    }
    const content = declared.content
    const media = String(answer.headers['content-type'] ?? '').split(';')[0]!.trim()
    if (content === undefined || method === 'HEAD') {
      if (answer.text !== '' && method !== 'HEAD') out.push(`${answer.status}: a body where none is declared: ${answer.text.slice(0, 200)}`)
      return out
    }
    const schema = content[media]?.schema
    if (schema === undefined) return [...out, `${answer.status}: content type "${media}" is not declared (${Object.keys(content).join(', ')})`]
    const values = media.startsWith('text/') ? [answer.text] : media === 'application/x-ndjson'
      ? answer.text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as unknown)
      : [answer.text === '' ? undefined : JSON.parse(answer.text) as unknown]
    const validate = this.validator(`${op} ${answer.status} ${media}`, schema)
    for (const value of values) {
      if (!validate(value)) out.push(`${answer.status} ${media}: ${JSON.stringify(validate.errors?.slice(0, 3))} in ${JSON.stringify(value).slice(0, 300)}`)
    }
    return out
  }

  /** Sends the case, records its operation as exercised, and returns the answer with what the document does not allow of it. */
  async send(c: Case): Promise<{ answer: Answer; problems: string[] }> {
    const method = c.op.split(' ')[0] as Dispatcher.HttpMethod
    const answer = await call(method, c.url, c.headers ?? {}, c.body)
    this.exercised.add(c.op)
    return { answer, problems: this.problems(c.op, method, answer) }
  }

  /** Asserts that `answer` (to `op`, however it was sent) is allowed and has `status`; records `op` as exercised. */
  hold(t: Asserts, op: string, answer: Answer, status: number, label = ''): Answer {
    this.exercised.add(op)
    t.same(this.problems(op, op.split(' ')[0]!, answer), [], `${op}${label}: answered ${answer.status} as declared`)
    t.equal(answer.status, status, `${op}${label}: ${status}${answer.status === status ? '' : ` (${answer.text.slice(0, 300)})`}`)
    return answer
  }

  /** Sends the case and holds its answer to the document and to `status`. */
  async expect(t: Asserts, c: Case, status: number, label = ''): Promise<Answer> {
    const { answer } = await this.send(c)
    return this.hold(t, c.op, answer, status, label)
  }

  /** The operations under `prefix` no case exercised. */
  missed(prefix: string): string[] {
    return this.operations(prefix).filter((o) => !this.exercised.has(o))
  }
}

/** What the contract asserts with (a tap test). */
export interface Asserts {
  same(found: unknown, wanted: unknown, message: string): void
  equal(found: unknown, wanted: unknown, message: string): void
}
