// The API of both services as the router runs it: the route tables, the
// schema compiler with the graph's checks, and GET /openapi.json built from
// the same declarations (src/http/openapi.ts).
import { Type } from '@sinclair/typebox'
import { OAUTH_ROUTES } from '../auth/routes'
import { ACCOUNT_PATH } from '../auth/models/account-client'
import { ERRORS } from '../core/errors'
import { jsonValue } from '../http/json-value'
import { openApiDocument, type ApiExtra, type ApiService } from '../http/openapi'
import { SchemaCompiler } from '../http/schemas'
import { GRAPH_ROUTES } from '../graph/routes'
import { GRAPH_CHECKS } from '../graph/validate'

export const SERVICES: readonly ApiService[] = [
  { tag: 'graph', prefix: '/graph/v1/{tenant}', prefixParams: { tenant: Type.String({ description: 'the tenant (not starting with "@")' }) }, routes: GRAPH_ROUTES,
    errors: ['bad_request', 'forbidden', 'service_unavailable', 'internal_error'] },
  { tag: 'oauth2', prefix: '/oauth2/v1', prefixParams: {}, routes: OAUTH_ROUTES, errors: ['service_unavailable', 'internal_error'] },
]

const CHECKS = Type.Record(Type.String(), Type.String(), { description: 'each check and its state ("ok" when it passes)' })

export const EXTRAS: readonly ApiExtra[] = [
  {
    path: '/errors', method: 'GET', summary: 'Every error type and what it means (the moreInfo of every error)',
    response: Type.Record(Type.String(), Type.String(), { example: { element_not_found: ERRORS.element_not_found.meaning } }),
  },
  {
    path: '/openapi.json', method: 'GET', summary: 'This document (OpenAPI 3.1)',
    response: Type.Object({ openapi: Type.String() }, { example: { openapi: '3.1.0' } }),
  },
  {
    path: ACCOUNT_PATH, method: 'GET',
    summary: "The account page: a shop's customer signs in and sees, takes back, downloads or erases their data (HTML with its own script; docs/manual/account-page.md)",
    response: { content: { 'text/html': Type.String({ example: '<!doctype html>' }) } },
  },
  {
    path: '/health/live', method: 'GET', summary: 'Liveness probe: the process answers (no token)',
    response: Type.Object({ status: Type.Literal('live') }, { example: { status: 'live' } }),
  },
  {
    path: '/health/ready', method: 'GET', summary: 'Readiness probe: 200 when every check is ok, else 503 naming the failing checks (no token)',
    response: Type.Object({ status: Type.Literal('ready'), checks: CHECKS }, { example: { status: 'ready', checks: { actors: 'ok' } } }),
    answers: {
      503: Type.Object({ status: Type.Literal('not ready'), failing: Type.Array(Type.String()), checks: CHECKS }, {
        description: 'Not ready', example: { status: 'not ready', failing: ['actors'], checks: { actors: 'starting' } },
      }),
    },
  },
  {
    path: '/metrics', method: 'GET', summary: 'Prometheus text format (--metrics: open, off, or a bearer token with scope platform.metrics)',
    response: { content: { 'text/plain': Type.String({ example: '# TYPE http_requests_total counter' }) } },
    // token: the scope's 401 and 403; off: 404; while the server starts: 503
    errors: ['insufficient_credentials', 'insufficient_scope', 'element_not_found', 'service_unavailable'],
  },
  {
    path: '/.well-known/oauth-authorization-server/oauth2/v1', method: 'GET', summary: "RFC 8414 metadata at the root, in the issuer path's form (the same document as discovery)",
    response: Type.Object({ issuer: Type.String() }, { example: { issuer: 'https://platform.example/oauth2/v1' } }),
  },
  {
    path: '/gateway/{packageId}/{serviceId}/{path}', method: 'GET', pathParams: ['packageId', 'serviceId', 'path'], security: [{ bearer: [] }],
    summary: "The gateway (spec 1.6): any method and path under a package's service is forwarded to its sourceUrl (bearer token with the service in allowedServices)",
    response: jsonValue("the service's own answer, URLs rewritten to the proxy URL"),
    // the token and its allowedServices, the path, the service's package, the upstream's failures and the in-flight limit
    errors: ['bad_request', 'insufficient_credentials', 'forbidden', 'element_not_found', 'bad_gateway', 'service_unavailable', 'gateway_timeout'],
  },
]

let cached: { url: string; text: string } | undefined

export const API = {
  graph: GRAPH_ROUTES,
  oauth: OAUTH_ROUTES,
  schemas: new SchemaCompiler(GRAPH_CHECKS),
  /** The document's text for the server at `publicUrl` (built once). */
  document(publicUrl: string): string {
    if (cached?.url !== publicUrl) {
      const info = { title: 'Profile graph platform', version: '1', description: 'The profile graph service (/graph/v1) and the OAuth 2.0 / OpenID Connect server (/oauth2/v1).' }
      cached = { url: publicUrl, text: JSON.stringify(openApiDocument(info, publicUrl, SERVICES, EXTRAS)) }
    }
    return cached.text
  },
}
