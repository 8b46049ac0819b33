// How the command-line tools talk to a running server: a platform.admin
// token from the client-credentials grant, then JSON calls whose refusal is
// one line naming the status and the server's message.
import { ConfigError, type ToolConfig } from '../config'

/** Calls the running server; a refusal is one line naming the status and the server's message. */
export async function callServer(url: string, init: RequestInit): Promise<unknown> {
  let res: Response
  try {
    res = await fetch(url, init)
  } catch (err) {
    throw new ConfigError(`cannot reach the server at ${url}: ${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message}`)
  }
  const text = await res.text()
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = text
  }
  if (!res.ok) {
    const o = body as { message?: string; error_description?: string }
    throw new ConfigError(`${init.method ?? 'GET'} ${url} answered ${res.status}: ${o.error_description ?? o.message ?? text}`)
  }
  return body
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
