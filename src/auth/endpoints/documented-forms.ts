// The OAuth endpoints' parameters as schemas, for GET /openapi.json: the
// endpoints read and check each one themselves (RFC 6749 error answers), so
// every field is an optional string here.
import { Type, type TObject } from '@sinclair/typebox'

const fields = (names: string[], example: Record<string, string>): TObject =>
  Type.Object(Object.fromEntries(names.map((n) => [n, Type.Optional(Type.String())])), { example })

export const AUTHORIZE_PARAMS = fields(
  ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'nonce', 'code_challenge', 'code_challenge_method', 'prompt', 'max_age', 'response_mode', 'login_hint', 'id_token_hint'],
  { response_type: 'code', client_id: 'shop-web', redirect_uri: 'https://shop.example.com/cb', scope: 'openid', state: 'x1', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' },
)

export const END_SESSION_PARAMS = fields(
  ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'confirm'],
  { client_id: 'shop-web', post_logout_redirect_uri: 'https://shop.example.com/bye', state: 'x2' },
)

export const TOKEN_FORM = fields(
  ['grant_type', 'code', 'redirect_uri', 'code_verifier', 'refresh_token', 'scope', 'username', 'password', 'client_id', 'client_secret'],
  { grant_type: 'client_credentials', scope: 'platform.profile_graph_view' },
)

export const REVOKE_FORM = fields(['token', 'token_type_hint', 'client_id', 'client_secret'], { token: 'an-access-or-refresh-token', token_type_hint: 'refresh_token' })

export const TOKENINFO_QUERY = fields(['access_token'], { access_token: 'an-access-token' })
