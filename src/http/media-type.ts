// The content-type check of bodies: JSON for the graph, forms for OAuth,
// NDJSON for a body the route reads itself as it streams (bulk writes).
import { ApiError } from '../core/errors'

export type BodyKind = 'json' | 'form' | 'ndjson'

export const MEDIA: Readonly<Record<BodyKind, string>> = { json: 'application/json', form: 'application/x-www-form-urlencoded', ndjson: 'application/x-ndjson' }

export function requireMediaType(contentType: string, kind: BodyKind): void {
  const media = contentType.split(';')[0]!.trim().toLowerCase()
  if (media === MEDIA[kind]) return
  const message = `the body must be sent with Content-Type: ${MEDIA[kind]}${contentType === '' ? '' : `, got "${contentType}"`}`
  throw new ApiError('unsupported_media_type', message, kind === 'form' ? { oauth: { error: 'invalid_request', error_description: message } } : {})
}
