// An OTLP/HTTP trace receiver in the test's process (no collector is
// installable here): POST /v1/traces with a JSON body (the exporter's
// http/json protocol), every span kept with its resource's service name.
// Anything else it is sent (another path, protobuf) is counted and refused,
// so a test sees it.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { until } from '../../bench/wait'

/** A span as received: ids in hex, attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** '' for a root span */
  parentSpanId: string
  name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client */
  kind: number
  attributes: Record<string, string | number | boolean>
  /** OTLP's status code: 0 unset, 1 ok, 2 error */
  status: number
  service: string
}

interface AnyValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
interface KeyValue { key: string; value: AnyValue }
interface JsonSpan {
  traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number
  attributes?: KeyValue[]; status?: { code?: number }
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[]
}

const plain = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? ''

const attributesOf = (list: KeyValue[] | undefined): Record<string, string | number | boolean> =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]))

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  /** Every request it was sent, accepted or not. */
  requests = 0
  /** Requests it could not read (not POST /v1/traces with a JSON body). */
  refused = 0
  /** The content type of every request. */
  readonly contentTypes: string[] = []
  private server: Server | undefined

  /** Starts listening on `port` of 127.0.0.1 (a free one by default); rejects when it is taken. */
  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      this.requests++
      this.contentTypes.push(String(req.headers['content-type']))
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
          this.refused++
          res.writeHead(415).end()
          return
        }
        try {
          this.take(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest)
        } catch {
          this.refused++
          res.writeHead(400).end()
          return
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    })
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject)
      this.server!.listen(port, '127.0.0.1', resolve)
    })
  }

  /** The URL spans are sent to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT). */
  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1/traces`
  }

  private take(body: ExportRequest): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '')
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind,
            attributes: attributesOf(s.attributes), status: s.status?.code ?? 0, service,
          })
        }
      }
    }
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId)
  }

  /** Waits until `pick` finds a span (the threads export every 100 ms or so in the tests), and returns it. */
  async span(pick: (s: ReceivedSpan) => boolean, what: string, timeoutMs = 20_000): Promise<ReceivedSpan> {
    await until(what, () => this.spans.some(pick), timeoutMs)
    return this.spans.find(pick)!
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise((resolve) => this.server?.close(resolve))
  }
}
