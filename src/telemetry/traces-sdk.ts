// The OpenTelemetry SDK behind src/telemetry/traces.ts, loaded only when
// traces are on: one tracer provider per thread (the front thread and each
// shard actor export their own spans), a batch processor and the OTLP/HTTP
// exporter, both configured by the standard OTEL_* variables, which the SDK
// reads itself. Parents are passed explicitly (a span, or a traceparent from
// another thread); the one implicit context is the request span of the
// running handler, kept in an AsyncLocalStorage (piscina tasks and actor
// calls read it), so no global context manager is registered.
import { AsyncLocalStorage } from 'node:async_hooks'
import { DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, diag, trace, type Attributes, type Context, type Span } from '@opentelemetry/api'
import { parseTraceParent } from '@opentelemetry/core'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import type { SpanKindName, SpanParent, TraceOptions, Traces } from './traces'

const KINDS: Record<SpanKindName, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL }

/** Where the SDK's own complaints go (an unreachable collector, a refused export): the server's log. */
export type TraceWarn = (message: string) => void

/** The parent's context: a span of this thread, a valid traceparent, or the root. */
function contextOf(parent: SpanParent): Context {
  if (parent === undefined) return ROOT_CONTEXT
  if (typeof parent !== 'string') return trace.setSpan(ROOT_CONTEXT, parent)
  const remote = parent === '' ? null : parseTraceParent(parent.trim())
  return remote === null || !trace.isSpanContextValid(remote) ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { ...remote, isRemote: true })
}

export function startSdk(options: TraceOptions, thread: string, warn: TraceWarn): Traces {
  diag.setLogger({
    error: (message) => warn(`traces: ${message}`),
    warn: (message) => warn(`traces: ${message}`),
    info: () => undefined, debug: () => undefined, verbose: () => undefined,
  }, DiagLogLevel.WARN)
  const exporter = options.protocol === 'http/json' ? new JsonExporter() : new ProtobufExporter()
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'profile-graph' }))
    // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
    .merge(detectResources({ detectors: [envDetector] }))
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] })
  const tracer = provider.getTracer('profile-graph')
  const running = new AsyncLocalStorage<Span>()
  const threadName = { 'thread.name': thread }

  const start = (name: string, kind: SpanKindName, parent: SpanParent, attributes?: Attributes, startTime?: number): Span =>
    tracer.startSpan(name, { kind: KINDS[kind], attributes: attributes === undefined ? threadName : { ...threadName, ...attributes }, startTime }, contextOf(parent))

  const end = (span: Span, failure?: string, endTime?: number): void => {
    if (failure !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: failure })
    span.end(endTime)
  }

  return {
    request: (method, traceparent) => start(method, 'server', traceparent, { [ATTR_HTTP_REQUEST_METHOD]: method }),
    endRequest: (span, method, route, status) => {
      span.updateName(`${method} ${route}`)
      span.setAttribute(ATTR_HTTP_ROUTE, route)
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status)
      end(span, status >= 500 ? `HTTP ${status}` : undefined)
    },
    start,
    end,
    traceparent: (span) => {
      const c = span.spanContext()
      return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, '0')}`
    },
    current: () => running.getStore(),
    within: (span, fn) => running.run(span, fn),
    shutdown: () => provider.shutdown(),
  }
}
