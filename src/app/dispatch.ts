// The request lifecycle on the front thread, in order: decode the path, find
// the route (404/405), authenticate and check scope and tenant (401/403),
// check the content type (415), read the body within the limit (413), bound a
// JSON body's depth and element count (400), validate the path's params, the
// query and the body against the route's schemas (400), run the handler with
// the typed values. Any ApiError thrown on the way becomes the error answer.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { authorize, bearerToken, permits, requireBearer, requireLive, requireScope } from '../auth/helpers/bearer'
import { checkOAuthCapture } from '../auth/routes'
import { rootWellKnownPath } from '../auth/endpoints/discovery'
import { answerCors } from './cors-policy'
import { ApiError, ERROR_TYPES } from '../core/errors'
import type { LineBody } from '../graph/bulk-line'
import type { GraphCaller } from '../graph/params'
import type { AccessTokenRecord } from '../auth/models/auth-store'
import { forward } from '../gateway/forward'
import { tenantSegment } from '../graph/validate'
import { bodyTooLarge, readBody } from '../http/body'
import { BodyIntake } from '../http/body-intake'
import { Exchange } from '../http/exchange'
import { isDraining } from '../http/in-flight'
import { checkJsonLimits } from '../http/json-limits'
import { requireMediaType } from '../http/media-type'
import { parseJson } from '../http/parse-json'
import type { Input, Method, SchemaSlots } from '../http/route'
import { Router, type CompiledMethod, type CompiledRoute } from '../http/router'
import { API } from './openapi'
import type { Services } from './services'
import { adminAudit, graphAudit, graphTemplate, oauthTemplate } from '../operations/request-labels'
import { traces, type Span, type Traces } from '../telemetry/traces'
import { sendAccountPage } from '../auth/endpoints/account/page'
import { ACCOUNT_PATH } from '../auth/models/account-client'

const ROOT_METADATA_ROUTE = '/.well-known/oauth-authorization-server/:issuerPath'

const notFound = (ex: Exchange): ApiError => new ApiError('element_not_found', `no route for ${ex.method} ${ex.rawPath}`)

function methodNotAllowed<S, C>(ex: Exchange, route: CompiledRoute<S, C>): ApiError {
  return new ApiError('method_not_allowed', `${ex.method} is not allowed here; allowed: ${route.allow}`, { headers: { allow: route.allow } })
}

const GRAPH = new Router(API.graph, API.schemas, { emptyCaptures: true })
// Every graph call is authorized against a scope: a route without one is a bug, found at start-up.
for (const route of GRAPH.routes) {
  for (const [method, m] of Object.entries(route.methods)) if (m.spec.scope === undefined) throw new Error(`graph route ${method} ${route.pattern} declares no scope`)
}
const OAUTH = new Router(API.oauth, API.schemas, { emptyCaptures: false, checkCapture: checkOAuthCapture })
const NO_BODY = Buffer.alloc(0)
/** The first path segments whose requests a cluster host hands to the authorization service's owner. */
const HANDED_TO_AUTH_OWNER = new Set(['oauth2', '.well-known', 'gateway'])
const NO_QUERY: Readonly<Record<string, string>> = Object.freeze({})

/** The first value of every query parameter (URLSearchParams.get's choice). */
function queryObject(query: URLSearchParams): Record<string, string> {
  // A Map, then own fields: "constructor" is not already "in" it, "__proto__" becomes a parameter the schema names.
  const first = new Map<string, string>()
  for (const [k, v] of query) if (!first.has(k)) first.set(k, v)
  return Object.fromEntries(first)
}

/** What a handler is handed: the service's part (C) and the validated input. */
type HandlerInput<C> = C & Input<SchemaSlots>

/**
 * The handler's input with every field present from the start (query and
 * body are set once validated): each service's inputs then share one shape.
 * A spread (`{ ...caller, params, query, body }`) missed V8's inline cache on
 * every request, ~9,500 instructions (bench/MEASUREMENTS.md, "The front
 * thread's cost per request", 2026-11-25).
 */
const graphInput = (tenant: string, token: AccessTokenRecord, params: Record<string, string>): HandlerInput<GraphCaller> =>
  ({ tenant, token, params, query: NO_QUERY, body: NO_BODY })
const oauthInput = (params: Record<string, string>): HandlerInput<object> => ({ params, query: NO_QUERY, body: NO_BODY })

/**
 * Validates params, query and body in this order and runs the handler with
 * them. `parsed`: a JSON body parsed already (a bulk line's), else `raw` is.
 */
function handle<C>(s: Services, ex: Exchange, m: CompiledMethod<Services, C>, input: HandlerInput<C>, raw: Buffer, parsed?: { value: unknown }): void {
  m.params?.(input.params)
  if (m.query !== undefined) {
    const query = queryObject(ex.query)
    m.query(query)
    input.query = query
  }
  if (m.json !== undefined) {
    const body = parsed !== undefined ? parsed.value : parseJson(raw)
    m.json(body)
    input.body = body
  } else input.body = raw
  // Traces on: the handler and what it starts (actor calls, piscina tasks) run under the request's span.
  const t = traces
  if (t === undefined || ex.span === undefined) m.spec.handle(s, ex, input)
  else handleTraced(t, ex.span, s, ex, m, input)
}

/** The handler inside its request's span: a function apart, so that handle() itself makes no closure (nor a context for one) with traces off. */
function handleTraced<C>(t: Traces, span: Span, s: Services, ex: Exchange, m: CompiledMethod<Services, C>, input: HandlerInput<C>): void {
  t.within(span, () => m.spec.handle(s, ex, input))
}

/** Checks a JSON body's limits, then validates and runs (`raw`: the body as read, empty for 'none'). */
function runWith<C>(s: Services, ex: Exchange, m: CompiledMethod<Services, C>, input: HandlerInput<C>, raw: Buffer): void {
  if (m.spec.body === 'json') checkJsonLimits(raw, s.jsonLimits)
  handle(s, ex, m, input, raw)
}

function run<C>(s: Services, ex: Exchange, m: CompiledMethod<Services, C>, input: HandlerInput<C>): void {
  const kind = m.spec.body
  if (kind === 'none') {
    handle(s, ex, m, input, NO_BODY)
    return
  }
  requireMediaType(ex.headers['content-type'], kind)
  // A streamed body is read by its handler, as it arrives.
  if (kind === 'ndjson') {
    handle(s, ex, m, input, NO_BODY)
    return
  }
  readBody(ex.res, s.maxBody, ex.headers['content-length'], (body) => {
    try {
      runWith(s, ex, m, input, body)
    } catch (err) {
      ex.error(err)
    }
  }, (err) => ex.error(err, { closeConnection: true }))
}

function graph(s: Services, ex: Exchange, segments: string[]): void {
  if (segments.length < 4) throw notFound(ex)
  const tenant = tenantSegment(segments[2]!)
  const found = GRAPH.match(segments, 3)
  if (found === undefined) throw notFound(ex)
  ex.route = graphTemplate(found.route.pattern)
  const m = found.route.methods[ex.method as Method]
  if (m === undefined) throw methodNotAllowed(ex, found.route)
  const cluster = s.authCluster
  const elsewhere = cluster !== undefined && !cluster.servesHere()
  // A streamed body takes this way on every host; where this host checks tokens itself, the verdict is in at once.
  if (elsewhere || m.spec.body === 'ndjson') {
    const bearer = requireBearer(bearerToken(ex.headers.authorization))
    const verdict = elsewhere ? cluster.verify(bearer) : Promise.resolve(s.tokens.verify(bearer))
    graphOnVerdict(s, ex, m, found.route.pattern, tenant, found.params, verdict)
    return
  }
  const token = authorize(s.tokens, ex.headers.authorization, m.spec.scope!, tenant, m.spec.allowSubject === true)
  ex.audit = graphAudit(found.route.pattern, ex.method, tenant, token)
  run(s, ex, m, graphInput(tenant, token, found.params))
}

/**
 * A graph request whose token is checked while its body arrives: in cluster
 * mode on a host that does not serve the authorization service (its owner
 * answers `verdict` over NATS), and a streamed request on every host.
 * uWebSockets.js hands the body only to a reader set now: a body read whole
 * is read meanwhile, a streamed one is held (its socket paused) until the
 * route reads it, so no line runs before the verdict. The answers keep
 * run()'s order: 401/403 before 415, 413 and 400.
 */
function graphOnVerdict(s: Services, ex: Exchange, m: CompiledMethod<Services, GraphCaller>, pattern: string, tenant: string, params: Record<string, string>, verdict: Promise<AccessTokenRecord | undefined>): void {
  const kind = m.spec.body
  let bodyFailed = false
  const intake = kind === 'ndjson' ? new BodyIntake(ex) : undefined
  ex.intake = intake
  const body = kind === 'none' || kind === 'ndjson' ? Promise.resolve(NO_BODY) : new Promise<Buffer>((resolve, reject) => {
    readBody(ex.res, s.maxBody, ex.headers['content-length'], resolve, (err) => {
      bodyFailed = true
      reject(err)
    })
  })
  body.catch(() => undefined)
  verdict.then(async (record) => {
    const token = permits(requireLive(record), m.spec.scope!, tenant, m.spec.allowSubject === true)
    ex.audit = graphAudit(pattern, ex.method, tenant, token)
    if (kind !== 'none') requireMediaType(ex.headers['content-type'], kind)
    const raw = await body
    // A stream whose client left meanwhile has no response left to read it with.
    if (intake !== undefined && ex.aborted) return
    runWith(s, ex, m, graphInput(tenant, token, params), raw)
  }).catch((err: unknown) => {
    intake?.drop()
    ex.error(err, { closeConnection: bodyFailed })
  })
}

/**
 * A line of a bulk request (src/graph/bulk.ts), dispatched as the single
 * request it stands for from the route on, with the token the bulk request
 * was authorized with: scope and tenant as for that route, 413 past the body
 * limit, the JSON limits, the schemas, the handler. Only the routes declared
 * `inBulk` are served; any other method or path is a 405 on the line.
 */
export function dispatchLine(s: Services, ex: Exchange, tenant: string, record: AccessTokenRecord, body: LineBody | undefined): void {
  try {
    const found = GRAPH.match(ex.segments, 3)
    const m = found?.route.methods[ex.method as Method]
    // A method the route does not have is the single request's 405; a route or method a line may not carry is a 405 too.
    if (found !== undefined && m === undefined) throw methodNotAllowed(ex, found.route)
    if (found === undefined || m?.spec.inBulk !== true) {
      throw new ApiError('method_not_allowed', `${ex.method} ${ex.rawPath} is not a write a bulk request may carry (nodes, properties, relations, counters, consents)`)
    }
    ex.route = graphTemplate(found.route.pattern)
    const token = permits(record, m.spec.scope!, tenant, m.spec.allowSubject === true)
    ex.audit = graphAudit(found.route.pattern, ex.method, tenant, token)
    const input = graphInput(tenant, token, found.params)
    if (m.spec.body === 'none' || body === undefined) {
      runWith(s, ex, m, input, NO_BODY)
      return
    }
    // The body's own text only where the line does not settle its size and limits (src/graph/bulk-line.ts).
    const text = body.lineBytes > s.maxBody || !body.fitsLimits || m.spec.body !== 'json' ? Buffer.from(JSON.stringify(body.value)) : undefined
    if (text !== undefined && text.length > s.maxBody) throw bodyTooLarge(s.maxBody)
    if (m.spec.body !== 'json') handle(s, ex, m, input, text!)
    else {
      if (text !== undefined && !body.fitsLimits) checkJsonLimits(text, s.jsonLimits)
      handle(s, ex, m, input, NO_BODY, body)
    }
  } catch (err) {
    ex.error(err)
  }
}

/** `label`: the route template the access log names, where the path was not under /oauth2/v1 (RFC 8414's root form). */
function oauth(s: Services, ex: Exchange, segments: string[], label?: string): void {
  const found = OAUTH.match(segments, 2)
  if (found === undefined) throw notFound(ex)
  ex.route = label ?? oauthTemplate(found.route.pattern)
  const m = found.route.methods[ex.method as Method]
  if (m === undefined) throw methodNotAllowed(ex, found.route)
  if (m.spec.scope !== undefined) {
    ex.audit = adminAudit(found.route.pattern, ex.method, found.params, requireScope(s.tokens, ex.headers.authorization, m.spec.scope))
  }
  run(s, ex, m, oauthInput(found.params))
}

/** The routes outside both services answer GET only; anything else there is a 404, as it always was. */
function root(s: Services, ex: Exchange, segments: string[]): boolean {
  if (segments.length !== 1 || ex.method !== 'GET') return false
  if (segments[0] === 'errors') ex.json(200, JSON.stringify(ERROR_TYPES))
  else if (segments[0] === 'openapi.json') ex.json(200, API.document(s.publicUrl))
  else if (`/${segments[0]}` === ACCOUNT_PATH) sendAccountPage(ex)
  else return false
  ex.route = `/${segments[0]}`
  return true
}

export function dispatch(s: Services, res: HttpResponse, req: HttpRequest): void {
  const ex = new Exchange(res, req, s.publicUrl)
  try {
    const draining = isDraining()
    // Cluster mode: everything that reads or writes the authorization service's state is served by its owner.
    if (!draining && s.authCluster?.servesHere() === false && HANDED_TO_AUTH_OWNER.has(ex.segments[0]!)) {
      s.authCluster.proxy(ex, req)
      return
    }
    if (answerCors(s, ex)) return
    // A new request on a kept-alive connection during a shutdown is not in flight: refused (the answer closes it), readable by the page.
    if (draining) throw new ApiError('service_unavailable', 'the server is shutting down')
    const segments = ex.segments
    if (segments[1] === 'v1' && segments[0] === 'graph') graph(s, ex, segments)
    else if (segments[1] === 'v1' && segments[0] === 'oauth2') oauth(s, ex, segments)
    // RFC 8414's path form of the metadata URL; any other path there finds no route ('?').
    else if (segments[0] === '.well-known') oauth(s, ex, ['oauth2', 'v1', ...(rootWellKnownPath(s.oauth.issuer, segments) ?? ['?'])], ROOT_METADATA_ROUTE)
    else if (segments[0] === 'gateway') forward(s, ex, req)
    else if (!root(s, ex, segments)) throw notFound(ex)
  } catch (err) {
    ex.error(err)
  }
}
