// A route method: what it declares and its handler. The route tables
// (src/graph/routes.ts, src/auth/routes.ts) map a pattern to its methods;
// the dispatcher (src/app/dispatch.ts) does the common lifecycle: match, 405,
// authenticate, content type, body limit, JSON limits, then validates the
// declared params, query and body with their schemas (src/http/schemas.ts)
// and hands the handler the typed values. `S` is what the handler is handed
// (the services), `C` what the service's authentication adds (the graph's
// tenant and token): the edge does not know its users.
import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { ErrorType } from '../core/errors'
import type { Exchange } from './exchange'
import type { BodyKind } from './media-type'

export type Method = 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'

/** The input a route method declares, as TypeBox schemas (also the OpenAPI document's). */
export interface InputSchemas {
  /** The pattern's captures, by name: an object of strings. */
  params?: TSchema
  /** The query parameters (the first value of each): an object of optional strings. */
  query?: TSchema
  /** A JSON body: parsed and validated before the handler; without it the handler gets the raw bytes. */
  json?: TSchema
}

type Of<T, Otherwise> = T extends TSchema ? Static<T> : Otherwise

/** The three schemas of InputSchemas, each given or not. */
export interface SchemaSlots {
  params: TSchema | undefined
  query: TSchema | undefined
  json: TSchema | undefined
}

/** What the handler gets besides the service's part: validated, typed values. */
export interface Input<D extends SchemaSlots> {
  params: Of<D['params'], Readonly<Record<string, string>>>
  query: Of<D['query'], Readonly<Record<string, string>>>
  /** The parsed body if `json` is declared, else the bytes read (empty for body 'none'). */
  body: Of<D['json'], Buffer>
}

/** A success answer other than a bare JSON body: its bodies by media type (none: no body) and the headers it always carries. */
export interface AnswerSpec {
  content?: Readonly<Record<string, TSchema>>
  headers?: Readonly<Record<string, TSchema>>
  description?: string
}

/** One success answer: the schema of its JSON body, or an AnswerSpec. */
export type Answer = TSchema | AnswerSpec

/** An answer without a body (204, a redirect without headers worth naming). */
export const NO_BODY: AnswerSpec = {}

/** The success answers of a route method by status, each stated once: what the server sends and the document lists. */
export type Answers = Readonly<Partial<Record<number, Answer>>>

/** Words for the API description (GET /openapi.json). */
export interface RouteDoc {
  summary?: string
  /** Every success answer (the document's 2xx and 3xx; the contract test holds the server to them). */
  answers: Answers
  /** Error types the method answers besides those its declaration implies (src/http/openapi.ts, impliedErrors). */
  errors?: readonly ErrorType[]
  /** Errors may be HTML pages (for a browser: Accept text/html) as well as the JSON error body. */
  errorPages?: boolean
  /** Request headers the handler reads (an object of strings; `required` ones must be sent). */
  headers?: TObject
  /** How a route without `scope` authenticates, if it does: a bearer token, or the client (HTTP Basic or form). */
  authenticates?: 'bearer' | 'client'
  /**
   * A body's shape for the document, where the handler reads the body
   * itself: OAuth forms (RFC 6749 errors) and the admin API's JSON (checked
   * against this same schema by src/auth/helpers/json-body.ts, which words
   * each field's message as the API always has).
   */
  documented?: TSchema
  /** Query parameters for the document only, where the handler reads them itself (repeated ones are an error there). */
  documentedQuery?: TSchema
}

export interface RouteMethod<S, C> extends InputSchemas, RouteDoc {
  /** The body's media type, checked before it is read; 'none' is never read, 'ndjson' is read by the handler as it streams. */
  body: BodyKind | 'none'
  /** The method may also be a line of a streamed NDJSON request of its service (the graph's bulk writes). */
  inBulk?: boolean
  /** The scope the bearer token needs; none: the endpoint authenticates its own way (or not at all). */
  scope?: string
  /** A user token of the tenant may call it without the scope, for its own subject only (graph consents). */
  allowSubject?: boolean
  // A method, not a property: a handler typed for its own declared input is one of these.
  handle(s: S, ex: Exchange, input: C & Input<SchemaSlots>): void
}

export type RouteMethods<S, C> = Partial<Record<Method, RouteMethod<S, C>>>

/** A route table: pattern ("nodes/:ns/:type") and its methods, matched in order. */
export type RouteTable<S, C> = readonly (readonly [string, RouteMethods<S, C>])[]

/**
 * Declares a route method whose handler is typed by its own schemas:
 * `declareFor<Services, Caller>()({ params: NodeParams, body: 'json', json: Props, handle(s, ex, { params, body }) {...} })`.
 */
export function declareFor<S, C>() {
  return <P extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, J extends TSchema | undefined = undefined>(
    spec: Omit<RouteMethod<S, C>, 'handle' | keyof InputSchemas> & { params?: P; query?: Q; json?: J } & {
      handle(s: S, ex: Exchange, input: C & Input<{ params: P; query: Q; json: J }>): void
    },
  ): RouteMethod<S, C> => spec
}
