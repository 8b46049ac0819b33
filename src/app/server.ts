// The uWebSockets.js front thread: one catch-all route, because the path is
// decoded segment by segment by our own decoder (src/http/path.ts).
import uWS from 'uWebSockets.js'
import { ConfigError } from '../config/load-config'
import { ApiError } from '../core/errors'
import { EventStreams, STREAM_PATTERN } from '../graph/ws-stream'
import { dispatch } from './dispatch'
import { Exchange } from '../http/exchange'
import { isDraining } from '../http/in-flight'
import { OPERATIONS_PATHS, operationsEndpoint } from '../operations/endpoints'
import type { Services } from './services'

export interface Listening {
  port: number
  /** Stops accepting connections and ends the event streams; open connections stay for their answers. */
  stopAccepting(): void
  /** Closes every connection. */
  close(): void
}

/**
 * Stops uWebSockets.js from adding `uWebSockets: 20` to every answer. The
 * switch is undocumented: `_cfg('silent')` sets the loop's `noMark` (addon.cpp
 * of the pinned build); the Date header stays. The version in the library's
 * own parse-error pages is compiled in and cannot be removed from JS (docs/manual/http-edges.md).
 */
function silenceVersionHeader(): void {
  const cfg = (uWS as unknown as { _cfg?: (key: string) => void })._cfg
  if (typeof cfg === 'function') cfg('silent')
}

/**
 * Listens first, so that `--port 0` and the default PUBLIC_URL are known
 * before the services are built; until `services()` returns them, requests
 * get 503.
 */
export function listen(services: () => Services | undefined, host: string, port: number): Promise<Listening> {
  silenceVersionHeader()
  const app = uWS.App()
  // The event stream's WebSocket upgrades; a request without an upgrade falls through to the catch-all.
  const streams = new EventStreams()
  app.ws(STREAM_PATTERN, streams.behavior(services))
  // Health and metrics answer while starting and draining too (their answer says so).
  for (const path of OPERATIONS_PATHS) app.any(path, (res, req) => operationsEndpoint(services(), path, res, req))
  app.any('/*', (res, req) => {
    const s = services()
    // dispatch refuses a request during a shutdown itself, with the path's CORS headers; every answer then closes its connection.
    if (s !== undefined) dispatch(s, res, req)
    else new Exchange(res, req, '').error(new ApiError('service_unavailable', isDraining() ? 'the server is shutting down' : 'the server is starting'))
  })
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (socket === false) {
        reject(new ConfigError(`cannot listen on ${host}:${port}: the port is in use, not permitted, or the address is not this host's`))
        return
      }
      let accepting = true
      const stopAccepting = (): void => {
        if (!accepting) return
        accepting = false
        uWS.us_listen_socket_close(socket)
        streams.endAll()
      }
      resolve({
        port: uWS.us_socket_local_port(socket),
        stopAccepting,
        close: () => {
          stopAccepting()
          app.close()
        },
      })
    })
  })
}
