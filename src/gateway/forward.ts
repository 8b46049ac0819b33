// GET|POST|... /gateway/{packageId}/{serviceId}/...: forwards the request to
// the service's source URL with undici and streams both bodies with
// back-pressure: the client's body is read from uWebSockets.js only as fast
// as undici sends it (res.pause/resume), the service's is written to the
// client only as fast as the socket drains (onWritable). The response is
// sent chunked; URLs are rewritten (url-rewriter.ts) in uncompressed
// application/json, text/plain and text/html bodies and in the location and
// link headers; compressed or other bodies pass untouched.
import { STATUS_CODES } from 'node:http'
import { Readable } from 'node:stream'
import type { HttpRequest } from 'uWebSockets.js'
import { request, errors as undiciErrors, type Dispatcher } from 'undici'
import { ApiError } from '../core/errors'
import type { Exchange } from '../http/exchange'
import type { AuthServices } from '../auth/services'
import { proxyUrlOf } from '../contract/urls'
import { IDENTITY_HEADERS, identityHeaders } from './identity'
import type { GatewayServices } from './limits'
import { UrlRewriter } from './url-rewriter'
import { forwardedSegments } from './target-path'
import { log } from '../telemetry/log'
import { gatewayUpstreamSeconds } from '../telemetry/metrics'
import { traceParentId } from '../telemetry/request-id'
import { endHttpCall, traces } from '../telemetry/traces'

/** Hop-by-hop headers (RFC 9110 7.6.1) and what the gateway sets itself. */
const NOT_FORWARDED = new Set(['connection', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host', 'authorization', ...IDENTITY_HEADERS])
const NOT_RETURNED = new Set(['connection', 'keep-alive', 'proxy-connection', 'trailer', 'transfer-encoding', 'upgrade', 'content-length', 'x-request-id'])
const REWRITTEN_TYPES = new Set(['application/json', 'text/plain', 'text/html'])
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

type Services = AuthServices & GatewayServices

/** A service's answer that marks the upstream span an error (OpenTelemetry's rule for HTTP client spans is any 4xx or 5xx; a 4xx here is the caller's). */
const serverFailed = (status: number): boolean => status >= 500

/** The header names a Connection header lists: hop-by-hop too (RFC 9110 7.6.1). */
export function connectionOptions(values: readonly string[]): Set<string> {
  return new Set(values.flatMap((value) => value.split(',')).map((name) => name.trim().toLowerCase()).filter((name) => name !== ''))
}

function clientHeaders(req: HttpRequest): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>
  const named = connectionOptions([req.getHeader('connection')])
  req.forEach((name, value) => {
    if (!NOT_FORWARDED.has(name) && !named.has(name)) out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`
  })
  return out
}

/** The client's body as a stream undici reads; uWebSockets.js stops reading the socket while undici is behind. */
export function clientBody(ex: Exchange): Readable {
  const body = new Readable({ read: () => { if (ex.open) ex.res.resume() } })
  ex.res.onData((chunk, isLast) => {
    if (!body.push(Buffer.from(chunk.slice(0)))) ex.res.pause()
    if (isLast) body.push(null)
  })
  return body
}

function rewritable(headers: Dispatcher.ResponseData['headers']): boolean {
  const type = String(headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase()
  return REWRITTEN_TYPES.has(type) && encoding === 'identity'
}

/** The client learns which service failed and how, never an address or a socket error: those go to the log. */
function upstreamFailure(err: unknown, service: string, timeoutMs: number): ApiError {
  if (err instanceof undiciErrors.HeadersTimeoutError) return new ApiError('gateway_timeout', `the service "${service}" did not answer within ${timeoutMs} ms`)
  log.warn({ service, err: (err as Error).message }, 'gateway: the service could not be reached')
  return new ApiError('bad_gateway', `the service "${service}" could not be reached`)
}

/** Writes the service's answer, rewritten where spec 1.6 says (`source` to `proxy`; untouched when both are ''). */
export function relay(ex: Exchange, answer: Dispatcher.ResponseData, source: string, proxy: string, done: () => void): void {
  const rewrite = source !== proxy
  const connection = answer.headers.connection
  const named = connectionOptions(connection === undefined ? [] : Array.isArray(connection) ? connection : [connection])
  const rewriter = rewrite && rewritable(answer.headers) ? new UrlRewriter(source, proxy) : undefined
  const noBody = ex.method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304
  ex.status = answer.statusCode
  ex.res.cork(() => {
    ex.res.writeStatus(`${answer.statusCode} ${STATUS_CODES[answer.statusCode] ?? 'Unknown'}`).writeHeader('x-request-id', ex.requestId)
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined || NOT_RETURNED.has(name) || named.has(name)) continue
      for (const one of Array.isArray(value) ? value : [value]) {
        ex.res.writeHeader(name, rewrite && (name === 'location' || name === 'link') ? UrlRewriter.once(source, proxy, one) : one)
      }
    }
    if (noBody) {
      ex.finished = true
      ex.res.endWithoutBody()
    }
  })
  if (noBody) {
    answer.body.destroy()
    done()
    return
  }
  const body = answer.body
  body.on('data', (chunk: Buffer) => {
    if (ex.aborted) return
    const out = rewriter === undefined ? chunk : rewriter.push(chunk)
    let ok = true
    ex.res.cork(() => { ok = ex.res.write(out) })
    if (!ok) {
      body.pause()
      ex.res.onWritable(() => {
        body.resume()
        return true
      })
    }
  })
  body.on('end', () => {
    done()
    if (ex.aborted) return
    ex.finished = true
    ex.res.cork(() => ex.res.end(rewriter === undefined ? '' : rewriter.end()))
  })
  body.on('error', () => {
    done()
    // Headers are out: cut the connection so the client cannot take a truncated body for a whole one.
    if (ex.aborted) return
    ex.finished = true
    ex.res.close()
  })
}

export function forward(s: Services, ex: Exchange, req: HttpRequest): void {
  ex.route = '/gateway/:package/:service'
  const [, packageId, serviceId] = ex.segments
  if (packageId === undefined || serviceId === undefined) throw new ApiError('element_not_found', `no route for ${ex.method} ${ex.rawPath}: use /gateway/{packageId}/{serviceId}/...`)
  const service = s.oauth.packages.find(packageId)?.includedServices.find((svc) => svc.id === serviceId)
  if (service?.sourceUrl === undefined) throw new ApiError('element_not_found', `package "${packageId}" has no service "${serviceId}" behind the gateway`)
  if (!METHODS.has(ex.method)) throw new ApiError('method_not_allowed', `${ex.method} is not forwarded`, { headers: { allow: [...METHODS].join(', ') } })
  const t = traces
  const span = t === undefined || ex.span === undefined ? undefined : t.start('gateway upstream', 'client', ex.span, {
    'http.request.method': ex.method, 'server.address': new URL(service.sourceUrl).host, 'profile_graph.gateway.service': `${packageId}/${serviceId}`,
  })
  // The service is told the caller's traceparent, or with traces on the upstream span's (a child of the request's).
  const traceparent = span === undefined ? ex.headers.traceparent : t!.traceparent(span)
  const identity = identityHeaders(s, ex.headers.authorization, packageId, serviceId, traceParentId(traceparent.trim()))
  const headers = { ...clientHeaders(req), ...identity }
  if (span !== undefined) headers.traceparent = traceparent
  const raw = ex.rawPath.split('/')
  const rest = raw.length > 4 ? `/${forwardedSegments(raw.slice(4)).join('/')}` : ''
  const target = `${service.sourceUrl}${rest}${ex.rawQuery ? `?${ex.rawQuery}` : ''}`
  const release = s.gateway.acquire(`${packageId}/${serviceId}`)
  const hasBody = (ex.headers['content-length'] !== '' && ex.headers['content-length'] !== '0') || req.getHeader('transfer-encoding') !== ''
  const body = hasBody ? clientBody(ex) : undefined
  const abort = new AbortController()
  ex.onAbort = () => {
    abort.abort()
    release()
  }
  const { timeoutMs } = s.gateway.options
  // The label is a configured service (found above), never a path the client sent.
  const upstream = gatewayUpstreamSeconds.labels(`${packageId}/${serviceId}`)
  const sent = performance.now()
  const took = (): void => upstream.observe((performance.now() - sent) / 1000)
  request(target, {
    method: ex.method as Dispatcher.HttpMethod, headers, body, signal: abort.signal,
    headersTimeout: timeoutMs, bodyTimeout: timeoutMs,
  }).then(
    (answer) => {
      took()
      if (span !== undefined) endHttpCall(t!, span, answer.statusCode, undefined, serverFailed)
      if (ex.aborted) {
        answer.body.destroy()
        return
      }
      relay(ex, answer, service.sourceUrl!, proxyUrlOf(s.publicUrl, packageId, serviceId), release)
    },
    (err: unknown) => {
      // A client that went away aborted the call: not the service's time.
      if (!ex.aborted) took()
      if (span !== undefined) endHttpCall(t!, span, undefined, ex.aborted ? 'the client went away' : (err as Error).message, serverFailed)
      release()
      ex.error(upstreamFailure(err, serviceId, timeoutMs))
    },
  )
}
