// The bulk endpoint (POST /graph/v1/{tenant}/bulk, NDJSON both ways): a
// writable stream of write lines, and their answers as they come. The
// request body is the stream's readable side, so a write waits while the
// service reads no more (it holds at most 512 lines unanswered); in the
// default mode the answers must be read while writing, or the service stops
// reading. With `answers: 'errors'` only failed lines are answered, which
// suits a fetch that reads nothing before the body is sent (half duplex).
import { errorOfBody, ProfileGraphError } from './errors.js'
import { ndjson, linkedAbort } from './ndjson.js'
import { nodePath, relationPath, segment, type NodeRef, type RelationRef } from './refs.js'
import type { Transport } from './transport.js'
import type { BulkAnswerLine, BulkLine, ConsentRequest, NodeProperties, PropertyValue, RelationProperties, RevokedProperties } from './types.js'
import { writeHeaders, type WriteOptions } from './write-headers.js'

type LineOptions = Omit<WriteOptions, 'signal'>

/** Builders of bulk lines, one per write the endpoint takes, typed as the single requests are. */
export const bulkLines = {
  putNode: (node: NodeRef, properties: NodeProperties, consent: string, options: LineOptions = {}): BulkLine =>
    ({ method: 'PUT', path: `nodes/${nodePath(node)}`, headers: writeHeaders(consent, options), body: properties }),
  putProperty: (node: NodeRef, key: string, value: PropertyValue, consent: string, options: LineOptions = {}): BulkLine =>
    ({ method: 'PUT', path: `nodes/${nodePath(node)}/${segment(key)}`, headers: writeHeaders(consent, options), body: value }),
  deleteNode: (node: NodeRef, options: LineOptions = {}): BulkLine =>
    ({ method: 'DELETE', path: `nodes/${nodePath(node)}`, headers: writeHeaders(undefined, options) }),
  putRelation: (relation: RelationRef, properties: RelationProperties, consent: string, options: LineOptions = {}): BulkLine =>
    ({ method: 'PUT', path: `relations/${relationPath(relation)}`, headers: writeHeaders(consent, options), body: properties }),
  deleteRelation: (relation: RelationRef, options: LineOptions = {}): BulkLine =>
    ({ method: 'DELETE', path: `relations/${relationPath(relation)}`, headers: writeHeaders(undefined, options) }),
  incrementCounter: (relation: RelationRef, counter: string, consent: string, options: LineOptions = {}): BulkLine =>
    ({ method: 'POST', path: `counters/${relationPath(relation)}/${segment(counter)}`, headers: writeHeaders(consent, options) }),
  createConsent: (request: ConsentRequest): BulkLine => ({ method: 'POST', path: 'consents', body: request }),
  grantConsent: (ref: string): BulkLine => ({ method: 'POST', path: `consents/${segment(ref)}/grant` }),
  setRevokedProperties: (ref: string, properties: RevokedProperties): BulkLine =>
    ({ method: 'PUT', path: `consents/${segment(ref)}/revokedProperties`, body: properties }),
  revokeConsent: (ref: string): BulkLine => ({ method: 'DELETE', path: `consents/${segment(ref)}` }),
}

/** One line's answer. */
export interface BulkResult {
  /** Which line (from 0, in the order written). */
  index: number
  /** The status its single request would have had. */
  status: number
  /** Its answer's body, where the single request answers with one (201 consent, 200 counter). */
  body?: unknown
  /** Its error, when it failed (status 400 and up). */
  error?: ProfileGraphError
}

export interface BulkSummary {
  /** Lines answered. */
  done: number
  /** Of them, failed. */
  failed: number
}

export interface BulkOptions {
  /** 'all' (default): every line is answered; 'errors': only failed lines. */
  answers?: 'all' | 'errors'
  signal?: AbortSignal
}

export class BulkWrite {
  /** Write lines here (bulkLines builds them); close it when done. */
  readonly writable: WritableStream<BulkLine>
  private readonly answers: AsyncGenerator<BulkResult, BulkSummary, undefined>
  private summaryValue: BulkSummary | undefined
  private readonly abort: AbortController

  constructor(transport: Transport, tenantPath: string, options: BulkOptions) {
    const encoder = new TextEncoder()
    const lines = new TransformStream<BulkLine, Uint8Array>({
      transform: (line, out) => out.enqueue(encoder.encode(`${JSON.stringify(line)}\n`)),
    })
    this.writable = lines.writable
    const mode = options.answers ?? 'all'
    const abort = linkedAbort(options.signal)
    this.abort = abort
    const response = transport.send({
      method: 'POST', path: `${tenantPath}/bulk?answers=${mode}`, body: lines.readable, signal: abort.signal,
      headers: { 'content-type': 'application/x-ndjson', accept: 'application/x-ndjson' },
    })
    // A refused request (token, scope, tenant) stops the writer too.
    response.catch((e: unknown) => lines.readable.cancel(e).catch(() => undefined))
    this.answers = this.read(response, abort, mode)
  }

  private async *read(response: Promise<Response>, abort: AbortController, mode: 'all' | 'errors'): AsyncGenerator<BulkResult, BulkSummary, undefined> {
    let answered = 0
    for await (const a of ndjson<BulkAnswerLine>(await response, abort)) {
      if (a.done !== undefined) {
        this.summaryValue = { done: a.done, failed: a.failed ?? 0 }
        return this.summaryValue
      }
      const status = a.status ?? 0
      const index = mode === 'errors' && a.line !== undefined ? a.line - 1 : answered
      answered++
      const result: BulkResult = { index, status }
      if (a.body !== undefined) result.body = a.body
      if (a.error !== undefined) result.error = errorOfBody(a.error, status)
      yield result
    }
    throw cutShort()
  }

  /** The answers as they come (only the failed lines with answers 'errors'); ends after the last. */
  async *results(): AsyncGenerator<BulkResult, void, undefined> {
    for (let next = await this.answers.next(); next.done !== true; next = await this.answers.next()) yield next.value
  }

  /** The request's summary, once every answer is read (reads and drops the answers not read yet). */
  async summary(): Promise<BulkSummary> {
    for await (const _ of this.results()) { /* drained */ }
    if (this.summaryValue === undefined) throw cutShort()
    return this.summaryValue
  }

  /** Stops the request: the lines answered so far are durable, the others may or may not be. */
  cancel(): void {
    this.abort.abort()
  }
}

const cutShort = (): ProfileGraphError =>
  new ProfileGraphError({ status: 0, type: 'network_error', message: 'the bulk answer ended before its summary line' })
