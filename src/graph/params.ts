import type { AccessTokenRecord } from '../auth/models/auth-store'

/** What a graph handler gets: the tenant, the decoded segments after the resource name, and the caller's token. */
export interface GraphParams {
  tenant: string
  rest: string[]
  token: AccessTokenRecord
}
