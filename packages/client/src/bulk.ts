// The bulk endpoint (POST /graph/v1/{tenant}/bulk, NDJSON both ways): a
// writable stream of write lines, and their answers as they come.
// fetch is half duplex (Node's undici and browsers read no answer before the
// whole body is sent), and the service stops reading a body whose answers
// nobody reads: so every line answered ('all', the default) goes as a
// sequence of requests of at most `maxLines` lines, each answer small enough
// to wait in the connection's buffers; `answers: 'errors'`, where only
// failed lines are answered, streams everything as one request.
// With 'all' the answer is one line per line sent and nothing more: the
// summary is counted from them, and fewer answers than lines is an answer
// cut short. With 'errors' the service's last line is the summary.
// A request the service refuses as a whole applied no line (the token, or
// no owner in a cluster), so it is retried as an idempotent call is.
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
  /** 'all' (default): every line is answered; 'errors': only failed lines, everything in one streamed request. */
  answers?: 'all' | 'errors'
  /** 'all': lines per request (default 500). */
  maxLines?: number
  signal?: AbortSignal
}

const CHUNK_CHARS = 64 * 1024

const cutShort = (what: string): ProfileGraphError =>
  new ProfileGraphError({ status: 0, type: 'network_error', message: `the bulk answer ended ${what}` })

export class BulkWrite {
  /** Write lines here (bulkLines builds them); close it when done. */
  readonly writable: WritableStream<BulkLine>
  private readonly queue: BulkResult[] = []
  private wake: (() => void) | undefined
  private ended = false
  private failure: unknown
  private readonly summaryValue: BulkSummary = { done: 0, failed: 0 }
  private readonly abort: AbortController
  private readonly encoder = new TextEncoder()

  constructor(private readonly transport: Transport, private readonly tenantPath: string, options: BulkOptions) {
    this.abort = linkedAbort(options.signal)
    this.writable = options.answers === 'errors' ? this.streamed() : this.chunked(options.maxLines ?? 500)
  }

  /** 'all': lines gathered into requests of at most `maxLines`, each sent once the previous one is answered. */
  private chunked(maxLines: number): WritableStream<BulkLine> {
    let lines: string[] = []
    let sent = 0
    const flush = async (): Promise<void> => {
      if (lines.length === 0) return
      const body = lines.join('')
      const first = sent
      const count = lines.length
      sent += count
      lines = []
      await this.request(body, first, count)
    }
    return new WritableStream<BulkLine>({
      write: async (line) => {
        this.throwIfFailed()
        lines.push(`${JSON.stringify(line)}\n`)
        if (lines.length >= maxLines) await flush().catch((e: unknown) => this.fail(e))
      },
      close: async () => {
        await flush().catch((e: unknown) => this.fail(e))
        this.end()
      },
      abort: (reason) => this.fail(reason),
    })
  }

  /** 'errors': one request whose body is the stream's readable side, so a write waits while the service reads no more. */
  private streamed(): WritableStream<BulkLine> {
    // Lines go out gathered into chunks of up to 64 KiB (a chunk per line costs a write and a parse each:
    // a quarter of the throughput); a line that waits alone goes out after 5 ms.
    let pending = ''
    let timer: ReturnType<typeof setTimeout> | undefined
    const send = (out: TransformStreamDefaultController<Uint8Array>): void => {
      if (timer !== undefined) clearTimeout(timer)
      timer = undefined
      const chunk = pending
      pending = ''
      try {
        if (chunk !== '') out.enqueue(this.encoder.encode(chunk))
      } catch {
        // the request failed and closed the stream: results() and the writer throw its error
      }
    }
    const lines = new TransformStream<BulkLine, Uint8Array>({
      transform: (line, out) => {
        pending += `${JSON.stringify(line)}\n`
        if (pending.length >= CHUNK_CHARS) send(out)
        else timer ??= setTimeout(() => send(out), 5)
      },
      flush: (out) => send(out),
    })
    this.request(lines.readable, 0, undefined).then(() => this.end(), (e: unknown) => {
      // kept, not thrown: nobody awaits this promise (results() and summary() throw it)
      this.keepFailure(e)
      // the writer learns it too
      lines.readable.cancel(e).catch(() => undefined)
    })
    return lines.writable
  }

  /** One request: `count` lines, every one answered ('all'), or a streamed body whose summary line says how many (`count` undefined: 'errors'). */
  private async request(body: string | ReadableStream<Uint8Array>, first: number, count: number | undefined): Promise<void> {
    const mode = count === undefined ? 'errors' : 'all'
    const res = await this.transport.send({
      method: 'POST', path: `${this.tenantPath}/bulk?answers=${mode}`, body, signal: this.abort.signal, refusedAppliesNothing: true,
      headers: { 'content-type': 'application/x-ndjson', accept: 'application/x-ndjson' },
    })
    let answered = 0
    let failed = 0
    let summarised = false
    // read to the end: leaving the loop early would abort the request
    for await (const a of ndjson<BulkAnswerLine>(res, this.abort)) {
      if (a.done !== undefined) {
        // 'all' counts its answers instead; an older service's summary line there says the same
        if (count !== undefined) continue
        this.summaryValue.done += a.done
        this.summaryValue.failed += a.failed ?? 0
        summarised = true
        continue
      }
      const status = a.status ?? 0
      const result: BulkResult = { index: first + (a.line !== undefined ? a.line - 1 : answered), status }
      answered++
      if (status >= 400) failed++
      if (a.body !== undefined) result.body = a.body
      if (a.error !== undefined) result.error = errorOfBody(a.error, status)
      this.push(result)
    }
    if (count === undefined) {
      if (!summarised) throw cutShort('before its summary line')
      return
    }
    if (answered !== count) throw cutShort(`with ${answered} answers to ${count} lines`)
    this.summaryValue.done += answered
    this.summaryValue.failed += failed
  }

  private push(result: BulkResult): void {
    this.queue.push(result)
    this.wake?.()
  }

  private end(): void {
    this.ended = true
    this.wake?.()
  }

  private keepFailure(e: unknown): void {
    this.failure ??= e
    this.end()
  }

  private fail(e: unknown): never {
    this.keepFailure(e)
    throw this.failure
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure
  }

  /** The answers as they come (only the failed lines with answers 'errors'); ends once the writable is closed and every line answered. */
  async *results(): AsyncGenerator<BulkResult, void, undefined> {
    for (;;) {
      const next = this.queue.shift()
      if (next !== undefined) yield next
      else if (this.ended) return this.throwIfFailed()
      else await new Promise<void>((resolve) => { this.wake = resolve })
    }
  }

  /** The summary of every request, once all is answered (reads and drops the answers not read yet). */
  async summary(): Promise<BulkSummary> {
    for await (const _ of this.results()) { /* drained */ }
    return { ...this.summaryValue }
  }

  /** Stops sending: the lines answered so far are durable, the others may or may not be. */
  cancel(): void {
    this.abort.abort()
  }
}
