// The authorization service's routes under /oauth2/v1/. This issue brings
// only the token endpoint with client credentials; the rest of the spec
// (authorize, revoke, userinfo, ...) is the authorization-service issue.
import type { Method, MethodSpec } from '../front/route'
import { tokenEndpoint } from './token-endpoint'

export const OAUTH_ROUTES: Record<string, Partial<Record<Method, MethodSpec<undefined>>>> = {
  token: { POST: tokenEndpoint },
}
