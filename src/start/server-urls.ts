// The addresses a listening server goes by.
import type { Config } from '../config/load-config'

export interface ServerUrls {
  /** The bound address (with --port 0, the real port). */
  bound: string
  /** What clients are told: PUBLIC_URL, else the bound address. */
  public: string
  /** An address of it the local tools can connect to (the lock names it). */
  local: string
}

/** `host` as it goes in a URL; `forClients`: an unspecified address is replaced by the loopback. */
function urlHost(host: string, forClients: boolean): string {
  const h = forClients && host === '0.0.0.0' ? '127.0.0.1' : forClients && host === '::' ? '::1' : host
  return h.includes(':') ? `[${h}]` : h
}

export function serverUrls(config: Config, port: number): ServerUrls {
  const bound = `http://${urlHost(config.host, false)}:${port}`
  return { bound, public: config.publicUrl ?? bound, local: `http://${urlHost(config.host, true)}:${port}` }
}
