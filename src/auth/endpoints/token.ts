// POST /oauth2/v1/token: one grant per file under grants/.
import { TOKEN_FORM } from './documented-forms'
import type { Exchange } from '../../http/exchange'
import { oauthMethod, type AuthServices } from '../services'
import { authorizationCode } from './grants/authorization-code'
import { clientCredentials } from './grants/client-credentials'
import { password } from './grants/password'
import { refreshToken } from './grants/refresh-token'
import { invalidRequest, oauthError, single } from '../helpers/oauth-errors'
import { requireClientOrigin } from '../helpers/client-cors'
import { sendTokenResponse, type TokenResponse } from '../helpers/token-response'
import { tokensIssued } from '../../telemetry/metrics'
import { TokenAnswer } from './answers'

type GrantHandler = (s: AuthServices, ex: Exchange, form: URLSearchParams) => Promise<TokenResponse>

const GRANTS: Record<string, GrantHandler> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  password,
}

export const tokenEndpoint = oauthMethod({
  body: 'form',
  authenticates: 'client',
  documented: TOKEN_FORM,
  answers: { 200: TokenAnswer },
  errors: ['too_many_attempts', 'too_many_requests', 'forbidden'],
  summary: 'The token endpoint: authorization_code, refresh_token, client_credentials and password grants',
  handle(s, ex, { body }) {
    const form = new URLSearchParams(body.toString('utf8'))
    requireClientOrigin(s, ex, form)
    const grantType = single(form, 'grant_type')
    if (grantType === undefined || grantType === '') throw invalidRequest('grant_type is required')
    const grant = Object.prototype.hasOwnProperty.call(GRANTS, grantType) ? GRANTS[grantType] : undefined
    if (grant === undefined) throw oauthError('unsupported_grant_type', `grant_type "${grantType}" is not supported`)
    grant(s, ex, form).then((answer) => {
      tokensIssued.labels(grantType).inc()
      sendTokenResponse(ex, answer)
    }, (err: unknown) => ex.error(err))
  },
})
