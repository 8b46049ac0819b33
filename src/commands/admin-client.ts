// How the command-line tools talk to a running server: a token of their
// client (platform.admin, or a tenant's manage scope) from the
// client-credentials grant, then JSON calls whose refusal is
// one line naming the status and the server's message.
import { ConfigError, loadToolConfig, type ToolConfig } from '../config/load-config'
import { describeHolder, tryLockDataDir } from '../start/data-dir-lock'

/** The scope of the tenant tools (export-tenant.js, import-tenant.js): a client of the tenant that may write its graph. */
export const GRAPH_MANAGE_SCOPE = 'platform.profile_graph_manage'

/** The server's response; a server that cannot be reached is one line. */
export async function reach(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (err) {
    throw new ConfigError(`cannot reach the server at ${url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`)
  }
}

/** Calls the running server; a refusal is one line naming the status and the server's message. */
export async function callServer(url: string, init: RequestInit): Promise<unknown> {
  return await answerOf(await reach(url, init), url, init.method ?? 'GET')
}

/** The JSON (or text) of an answer; a refusal is one line naming the status and the server's message. */
export async function answerOf(res: Response, url: string, method: string): Promise<unknown> {
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  if (!res.ok) throw new ConfigError(`${method} ${url} answered ${res.status}: ${errorMessage(body) ?? text}`)
  return body
}

/** What an error body of the server says: OAuth's error_description, else the service's message. */
export function errorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined
  const o = body as { message?: unknown; error_description?: unknown }
  const said = o.error_description ?? o.message
  return typeof said === 'string' ? said : undefined
}

/** `{authorization: Bearer ...}` for the tool's admin client; `running` says why one is needed when none is given. */
export async function adminAuthorization(config: ToolConfig, serverUrl: string, running: string, scope = 'platform.admin'): Promise<Record<string, string>> {
  if (config.adminClientId === undefined || config.adminClientSecret === undefined) {
    throw new ConfigError(`${running}: give a ${scope} client (--admin-client-id and ADMIN_CLIENT_SECRET) to work through it, or stop it first`)
  }
  const basic = Buffer.from(`${encodeURIComponent(config.adminClientId)}:${encodeURIComponent(config.adminClientSecret)}`).toString('base64')
  const token = await callServer(`${serverUrl}/oauth2/v1/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
  }) as { access_token: string }
  return { authorization: `Bearer ${token.access_token}` }
}

/** The URL of the server the tool talks to: --server-url, or the one running on the data directory (its lock says where). */
export async function runningServer(config: ToolConfig, what: string): Promise<{ url: string; running: string }> {
  if (config.serverUrl !== undefined) return { url: config.serverUrl, running: `the server at ${config.serverUrl} runs` }
  const lock = await tryLockDataDir(config.dataDir, what)
  if ('release' in lock) {
    lock.release()
    throw new ConfigError(`no server runs on ${config.dataDir}: start it, or name one with --server-url`)
  }
  if (lock.url === undefined) throw new ConfigError(`${config.dataDir} is in use by ${describeHolder(lock)}: try again once it listens`)
  return { url: lock.url, running: `${config.dataDir} is in use by ${describeHolder(lock)}` }
}

/** The tenant's resources the tenant tools call. */
export type TenantResource = 'export' | 'import' | 'bulk'

/**
 * What export-tenant.js and import-tenant.js start from: their options, and
 * the URL of the tenant's resource (or of the one the options choose) with a manage token.
 */
export async function tenantEndpoint(what: string, resource: TenantResource | ((config: ToolConfig) => TenantResource)): Promise<{ config: ToolConfig; url: string; auth: Record<string, string> }> {
  const config = loadToolConfig(process.argv.slice(2), process.env)
  if (config.tenant === undefined) throw new ConfigError('name the tenant with --tenant (or TENANT)')
  const { url, running } = await runningServer(config, what)
  const auth = await adminAuthorization(config, url, running, GRAPH_MANAGE_SCOPE)
  const name = typeof resource === 'function' ? resource(config) : resource
  return { config, url: `${url}/graph/v1/${encodeURIComponent(config.tenant)}/${name}`, auth }
}
