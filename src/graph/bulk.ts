// POST /{tenant}/bulk: many writes in one streamed request. Each NDJSON line
// is the single request it stands for, dispatched through the same route
// table, checks and handlers (src/app/dispatch.ts, dispatchLine), and
// answered in order once durable. The request is not a transaction: each
// line is applied (with its events) or not on its own.
import { Type } from '@sinclair/typebox'
import { bodyTooLarge } from '../http/body'
import { LineExchange, lineError } from '../http/line-exchange'
import { streamNdjson } from '../http/ndjson-stream'
import { ERROR_MESSAGE } from '../http/schemas'
import { parseBulkLine } from './bulk-line'
import { graphMethod } from './services'

/**
 * Lines in flight at once: enough that a group commit carries hundreds of
 * them, few enough that a bulk request holds little memory and leaves the
 * actor's queue to others.
 */
const WINDOW = 512
const WINDOW_BYTES = 8 * 1024 * 1024
/** What a line may hold besides its body: method, path and headers. */
const ENVELOPE_BYTES = 64 * 1024

export const BulkQuery = Type.Object({
  answers: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('errors')], {
    description: 'all (the default): one answer per line, in order, and nothing else; errors: only the failed lines, each with its line number, then a last {"done":n,"failed":m}',
  })),
}, { [ERROR_MESSAGE]: 'the query parameter answers must be "all" (the default) or "errors"' })

const LineSchema = Type.Object({
  method: Type.String({ description: 'PUT, POST or DELETE' }),
  path: Type.String({ description: 'the path under /graph/v1/{tenant}/, percent-encoded as in a single request' }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'consent-reference, platform-context-trace-id, the scheduling and decay headers' })),
  body: Type.Optional(Type.Unknown({ description: 'the JSON body of the single request' })),
}, {
  description: 'one line of the NDJSON body',
  example: { method: 'PUT', path: 'nodes/core/customer/john', headers: { 'consent-reference': 'c-1' }, body: { name: 'John' } },
})

const AnswerSchema = Type.Object({
  line: Type.Optional(Type.Integer({ description: 'the line number (from 1), with answers=errors' })),
  status: Type.Optional(Type.Integer({ description: "the single request's status" })),
  body: Type.Optional(Type.Unknown({ description: "the single request's body, where it has one" })),
  error: Type.Optional(Type.Unknown({ description: "the single request's error body" })),
  done: Type.Optional(Type.Integer({ description: 'with answers=errors, the last line: how many lines were answered' })),
  failed: Type.Optional(Type.Integer({ description: 'with answers=errors, the last line: how many of them failed' })),
}, { example: { status: 204 } })

export const bulkWrite = graphMethod({
  body: 'ndjson',
  query: BulkQuery,
  documented: LineSchema,
  answers: { 200: { content: { 'application/x-ndjson': AnswerSchema } } },
  summary: 'Many writes in one streamed request: one per NDJSON line, answered per line in order (not a transaction)',
  handle(s, ex, { tenant, token, query }) {
    // The lines' paths are under the tenant as this request spelled it.
    const prefix = `${ex.rawPath.split('/', 4).join('/')}/`
    const options = { window: WINDOW, windowBytes: WINDOW_BYTES, maxLine: s.maxBody + ENVELOPE_BYTES, onlyFailures: query.answers === 'errors' }
    streamNdjson(ex, options, (split, answer) => {
      if (split.kind === 'oversized') {
        answer(lineError(bodyTooLarge(s.maxBody), s.publicUrl))
        return undefined
      }
      const parsed = parseBulkLine(split.bytes, s.jsonLimits)
      if (!parsed.ok) {
        // A line that is no JSON at all is handed back: streamNdjson refuses a body with no JSON line as not NDJSON.
        if (parsed.notJson) return parsed.error
        answer(lineError(parsed.error, s.publicUrl))
        return undefined
      }
      s.dispatchLine(new LineExchange(ex, prefix, parsed.line, answer), tenant, token, parsed.line.body)
      return undefined
    })
  },
})
