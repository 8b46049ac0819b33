// The content-type check of bodies: JSON for the graph, forms for OAuth.
import { ApiError } from '../core/errors'

export type BodyKind = 'json' | 'form'

const MEDIA: Record<BodyKind, string> = { json: 'application/json', form: 'application/x-www-form-urlencoded' }

export function requireMediaType(contentType: string, kind: BodyKind): void {
  const media = contentType.split(';')[0]!.trim().toLowerCase()
  if (media === MEDIA[kind]) return
  const message = `the body must be sent with Content-Type: ${MEDIA[kind]}${contentType === '' ? '' : `, got "${contentType}"`}`
  throw new ApiError('unsupported_media_type', message, kind === 'form' ? { oauth: { error: 'invalid_request', error_description: message } } : {})
}
