// The upstream's discovery document (OpenID Connect Discovery 1.0), fetched
// on first use and kept for an hour. Its `issuer` must equal the configured
// one exactly (section 4.3): otherwise ID tokens could be checked against
// an issuer the operator never named.
import { now } from '../../core/clock'
import { NOT_ACCEPTED, UpstreamError, upstreamJson } from './upstream-http'

export interface UpstreamMetadata {
  issuer: string
  authorization_endpoint: string
  token_endpoint: string
  jwks_uri: string
}

const TTL_MS = 3600_000
const WHAT = 'its discovery document'

function endpoint(doc: Record<string, unknown>, field: keyof UpstreamMetadata, where: string): string {
  const v = doc[field]
  if (typeof v !== 'string' || !/^https?:\/\//.test(v)) throw new UpstreamError(`${WHAT} has no ${field} URL`, `the discovery document ${where} has no ${field} URL`)
  return v
}

export const discoveryUrl = (issuer: string): string => `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`

export class Discovery {
  private readonly cache = new Map<string, { meta: UpstreamMetadata; at: number }>()

  async metadata(issuer: string): Promise<UpstreamMetadata> {
    const cached = this.cache.get(issuer)
    if (cached !== undefined && now() - cached.at < TTL_MS) return cached.meta
    const url = discoveryUrl(issuer)
    const { status, json } = await upstreamJson(url, WHAT)
    if (status !== 200) throw new UpstreamError(`${WHAT} ${NOT_ACCEPTED}`, `${url} answered ${status}`)
    if (json.issuer !== issuer) {
      throw new UpstreamError(`${WHAT} names another issuer than the configured one`, `the discovery document ${url} names issuer "${String(json.issuer)}", not the configured "${issuer}"`)
    }
    const meta: UpstreamMetadata = {
      issuer,
      authorization_endpoint: endpoint(json, 'authorization_endpoint', url),
      token_endpoint: endpoint(json, 'token_endpoint', url),
      jwks_uri: endpoint(json, 'jwks_uri', url),
    }
    this.cache.set(issuer, { meta, at: now() })
    return meta
  }

  /** A changed provider is read afresh. */
  forget(issuer: string): void {
    this.cache.delete(issuer)
  }
}
