// Traces, as the rest of the code sees them: `traces` is undefined unless the
// OTEL_* variables turn them on (src/config/trace-options.ts), and every
// traced place checks that one value first, so with traces off nothing is
// allocated and nothing of OpenTelemetry is even loaded: this file imports
// its types only, and traces-sdk.ts (the SDK, the exporter) is required once
// a start asks for it. How spans cross threads: docs/design/tracing.md.
import type { Attributes, Span } from '@opentelemetry/api'

export type { Attributes, Span }

export const TRACE_PROTOCOLS = ['http/protobuf', 'http/json'] as const
export type TraceProtocol = (typeof TRACE_PROTOCOLS)[number]

/** What a start with traces on needs to know (src/config/trace-options.ts reads it); the SDK reads the rest of the OTEL_* variables itself. */
export interface TraceOptions {
  /** OTLP over HTTP with a protobuf or a JSON body. */
  protocol: TraceProtocol
}

export type SpanKindName = 'server' | 'client' | 'internal'

/** A span's parent: a span of this thread, a W3C traceparent from another thread or host, or none (a new trace). */
export type SpanParent = Span | string | undefined

/** What the code traces with; traces-sdk.ts implements it. */
export interface Traces {
  /** The span of an HTTP request: a child of the caller's `traceparent` when it is one, else the root of a new trace. */
  request(method: string, traceparent: string): Span
  /** Ends a request's span, now that its route template and status are known (a 5xx marks it an error). */
  endRequest(span: Span, method: string, route: string, status: number): void
  /** A span under `parent`; `startTime` in performance.now() milliseconds, default now. */
  start(name: string, kind: SpanKindName, parent: SpanParent, attributes?: Attributes, startTime?: number): Span
  /** Ends a span; `failure` marks it an error and says why. `endTime` as startTime. */
  end(span: Span, failure?: string, endTime?: number): void
  /** The W3C traceparent header value naming `span` as the parent. */
  traceparent(span: Span): string
  /** The request span the running code belongs to (set around every route's handler, kept across its awaits). */
  current(): Span | undefined
  /** Runs `fn` with `span` as current() for it and for what it starts (promises, timers). */
  within<T>(span: Span, fn: () => T): T
  /** Sends the spans not yet exported; afterwards nothing is traced. */
  shutdown(): Promise<void>
}

/** Undefined while traces are off (the default): the one check every traced place makes. */
export let traces: Traces | undefined
/** Where startTraces was told to send the SDK's complaints. */
let warnTraces: (message: string) => void = () => undefined

/**
 * Loads the SDK and starts exporting, when `options` says traces are on;
 * `thread` names this thread in its spans, `warn` takes the SDK's complaints
 * (an export that failed).
 */
export async function startTraces(options: TraceOptions | undefined, thread: string, warn: (message: string) => void): Promise<void> {
  if (options === undefined || traces !== undefined) return
  const sdk = await import('./traces-sdk')
  warnTraces = warn
  traces = sdk.startSdk(options, thread, warn)
}

/** How long a clean exit waits for the last export (a collector that does not answer holds it no longer). */
const LAST_EXPORT_WAIT_MS = 2000

/** Exports what is left (before a clean exit), waiting LAST_EXPORT_WAIT_MS at most; a failed export is a warning, never a failed exit. */
export async function stopTraces(): Promise<void> {
  const t = traces
  traces = undefined
  if (t === undefined) return
  let timer: NodeJS.Timeout | undefined
  const waited = new Promise<void>((resolve) => { timer = setTimeout(resolve, LAST_EXPORT_WAIT_MS) })
  const exported = t.shutdown().catch((err: unknown) => warnTraces(`traces: the last spans could not be exported: ${err instanceof Error ? err.message : String(err)}`))
  await Promise.race([exported, waited])
  clearTimeout(timer)
}

/** Ends the span of an outgoing HTTP call: the status it got (an error where `failed` says so), or why it got none. */
export function endHttpCall(t: Traces, span: Span, status: number | undefined, failure: string | undefined, failed: (status: number) => boolean): void {
  if (status !== undefined) span.setAttribute('http.response.status_code', status)
  t.end(span, failure ?? (status !== undefined && failed(status) ? `HTTP ${status}` : undefined))
}

/** `run`, inside a span of its own under the current request's span (a piscina task); untraced outside a request. */
export function traceTask<T>(name: string, attributes: Attributes, run: () => Promise<T>): Promise<T> {
  const t = traces
  const parent = t?.current()
  if (t === undefined || parent === undefined) return run()
  const span = t.start(name, 'internal', parent, attributes)
  return run().then((value) => {
    t.end(span)
    return value
  }, (err: unknown) => {
    t.end(span, err instanceof Error ? err.message : String(err))
    throw err
  })
}
