// Who may pass the gateway, and what the service is told about them: a live
// bearer token (as the graph checks it) whose allowedServices (the
// subscription rules of spec 1.5, as /tokeninfo computes them) name the
// service; the identity goes in platform-* headers, which the gateway
// strips from what the client sent so that no client can forge them. The
// trace id is the one of the traceparent sent on (the caller's, or with
// traces on the gateway's span's), else a new one.
import { randomBytes } from 'node:crypto'
import { ApiError } from '../core/errors'
import { liveBearer } from '../auth/helpers/bearer'
import { allowedServices } from '../auth/endpoints/tokeninfo'
import type { AuthServices } from '../auth/services'

export const IDENTITY_HEADERS = ['platform-tenant', 'platform-client', 'platform-scopes', 'platform-user', 'platform-context-trace-id'] as const

/** `traceId`: the trace id of the traceparent the service is sent, '' when none. */
export function identityHeaders(s: AuthServices, authorization: string, packageId: string, serviceId: string, traceId: string): Record<string, string> {
  const { record } = liveBearer(s.tokens, authorization)
  if (!allowedServices(s, record).some((a) => a.package === packageId && a.id === serviceId)) {
    throw new ApiError('forbidden', `the access token does not allow the service "${serviceId}" of package "${packageId}": its tenant must own the package or be subscribed to it, and the token must carry one of the service's scopes`)
  }
  const headers: Record<string, string> = {
    'platform-tenant': record.tenant ?? '',
    'platform-client': record.client ?? '',
    'platform-scopes': record.scopes.join(' '),
    'platform-context-trace-id': traceId !== '' ? traceId : randomBytes(8).toString('hex'),
  }
  if (record.sub !== undefined) headers['platform-user'] = record.sub
  return headers
}
