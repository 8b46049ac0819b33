// The request lifecycle on the front thread, in order: decode the path, find
// the route (404/405), authenticate and check scope and tenant (401/403),
// check the content type (415), read the body within the limit (413), bound a
// JSON body's depth and element count (400), run the handler. Any ApiError
// thrown on the way becomes the error answer.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js'
import { authorize, requireScope } from './auth/helpers/bearer'
import { findOAuthRoute } from './auth/routes'
import { ApiError, ERROR_TYPES } from './errors'
import { findGraphRoute } from './graph/routes'
import { tenantSegment } from './graph/validate'
import { readBody } from './front/body'
import { Exchange } from './front/exchange'
import { checkJsonLimits } from './front/json-limits'
import { requireMediaType } from './front/media-type'
import type { Method } from './front/route'
import type { Services } from './services'
import type { RouteMethod } from './front/route'
import { adminAudit, consentAudit, graphTemplate, oauthTemplate } from './operations/request-labels'

const notFound = (ex: Exchange): ApiError => new ApiError('element_not_found', `no route for ${ex.method} ${ex.rawPath}`)

function methodNotAllowed(ex: Exchange, methods: object): ApiError {
  const allow = Object.keys(methods).join(', ')
  return new ApiError('method_not_allowed', `${ex.method} is not allowed here; allowed: ${allow}`, { headers: { allow } })
}

function run<P>(s: Services, ex: Exchange, spec: RouteMethod<P, Services>, params: P): void {
  if (spec.body === 'none') {
    spec.handle(s, ex, params, undefined)
    return
  }
  requireMediaType(ex.headers['content-type'], spec.body)
  readBody(ex.res, s.maxBody, ex.headers['content-length'], (body) => {
    try {
      if (spec.body === 'json') checkJsonLimits(body, s.jsonLimits)
      spec.handle(s, ex, params, body)
    } catch (err) {
      ex.error(err)
    }
  }, (err) => ex.error(err, { closeConnection: true }))
}

function graph(s: Services, ex: Exchange, segments: string[]): void {
  if (segments.length < 4) throw notFound(ex)
  const tenant = tenantSegment(segments[2]!)
  const route = findGraphRoute(segments[3]!, segments.slice(4))
  if (route === undefined) throw notFound(ex)
  ex.route = graphTemplate(route)
  const spec = route.methods[ex.method as Method]
  if (spec === undefined) throw methodNotAllowed(ex, route.methods)
  const token = authorize(s.tokens, ex.headers.authorization, spec.scope, tenant, spec.allowSubject === true)
  ex.audit = consentAudit(route, ex.method, tenant, token)
  run(s, ex, spec, { tenant, rest: segments.slice(4), token })
}

function oauth(s: Services, ex: Exchange, segments: string[]): void {
  const route = findOAuthRoute(segments.slice(2))
  if (route === undefined) throw notFound(ex)
  ex.route = oauthTemplate(route.pattern)
  const spec = route.methods[ex.method as Method]
  if (spec === undefined) throw methodNotAllowed(ex, route.methods)
  if (spec.scope !== undefined) ex.audit = adminAudit(route.pattern, ex.method, route.params, requireScope(s.tokens, ex.headers.authorization, spec.scope))
  run(s, ex, spec, route.params)
}

export function dispatch(s: Services, res: HttpResponse, req: HttpRequest): void {
  const ex = new Exchange(res, req, s.publicUrl)
  try {
    const segments = ex.segments
    if (segments[1] === 'v1' && segments[0] === 'graph') graph(s, ex, segments)
    else if (segments[1] === 'v1' && segments[0] === 'oauth2') oauth(s, ex, segments)
    else if (segments.length === 1 && segments[0] === 'errors' && ex.method === 'GET') {
      ex.route = '/errors'
      ex.json(200, JSON.stringify(ERROR_TYPES))
    }
    else throw notFound(ex)
  } catch (err) {
    ex.error(err)
  }
}
