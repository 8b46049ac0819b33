// The shape of an /oauth2/v1 route: MethodSpecs that receive the path
// parameters the pattern captured; `scope` makes the dispatcher check the
// bearer token before anything else (the admin API).
import type { MethodSpec } from './services'

export interface OAuthMethod extends MethodSpec<string[]> {
  scope?: string
}
