// The ceiling: a bare uWebSockets.js server that answers the bench's routes
// with fixed bodies, after reading the request body where there is one. It
// does no auth, no parsing and no storage, so it is the most this HTTP stack
// can do on this machine with the same load generator; every figure of the
// real service is also given as a ratio to it.
//
// Run as its own process (`node dist/bench/ceiling.js [--bodies FILE]`) so it
// never shares an event loop with the generator. Prints `listening <url>`.
import { readFileSync } from 'node:fs'
import uWS from 'uWebSockets.js'
import { BUILT_IN_BODIES, isCeilingBodies, type CeilingBodies } from './ceiling-bodies'
import { turnOffPretenuring } from '../src/start/v8-heap'

function loadBodies(argv: readonly string[]): CeilingBodies {
  const i = argv.indexOf('--bodies')
  if (i === -1 || argv[i + 1] === undefined) return BUILT_IN_BODIES
  const parsed: unknown = JSON.parse(readFileSync(argv[i + 1]!, 'utf8'))
  if (!isCeilingBodies(parsed)) throw new Error(`${argv[i + 1]} is not a ceiling bodies file`)
  return parsed
}

/** Waits for the whole request body, then answers (corked: we are no longer in the handler's own tick). */
function afterBody(res: uWS.HttpResponse, answer: (res: uWS.HttpResponse) => void): void {
  let aborted = false
  res.onAborted(() => { aborted = true })
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) res.cork(() => answer(res))
  })
}

function json(res: uWS.HttpResponse, body: string): void {
  res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(body)
}

export function ceilingApp(bodies: CeilingBodies): uWS.TemplatedApp {
  const app = uWS.App()
  const neighbours = bodies.neighbours
  app.get('/graph/v1/:tenant/nodes/:ns/:type/:id', (res) => json(res, bodies.node))
  app.get('/graph/v1/:tenant/nodes/:ns/:type', (res) => json(res, bodies.list))
  app.get('/graph/v1/:tenant/neighbours/:ns/:type/:id', (res, req) => {
    const id = req.getParameter(3) ?? ''
    const hit = neighbours.find((n) => id.startsWith(n.idPrefix)) ?? neighbours[0]
    json(res, hit === undefined ? '[]' : hit.body)
  })
  app.put('/graph/v1/*', (res) => afterBody(res, (r) => { r.writeStatus('204 No Content').endWithoutBody(0) }))
  // The counter POST has no body (as in the service, which does not read one).
  app.post('/graph/v1/:tenant/counters/*', (res) => json(res, bodies.counter))
  app.post('/oauth2/v1/token', (res) => afterBody(res, (r) => {
    r.writeStatus('200 OK').writeHeader('content-type', 'application/json').writeHeader('cache-control', 'no-store').end(bodies.token)
  }))
  app.any('/*', (res) => {
    res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json').end('{"status":404}')
  })
  return app
}

function main(): void {
  // The same V8 setting as the service's threads (src/start/v8-heap.ts).
  turnOffPretenuring()
  const bodies = loadBodies(process.argv.slice(2))
  const app = ceilingApp(bodies)
  app.listen('127.0.0.1', 0, (socket) => {
    if (socket === false) {
      console.error('ceiling: cannot listen')
      process.exit(1)
    }
    console.log(`listening http://127.0.0.1:${uWS.us_socket_local_port(socket)}`)
    const stop = (): void => {
      uWS.us_listen_socket_close(socket)
      app.close()
      process.exit(0)
    }
    process.on('SIGTERM', stop)
    process.on('SIGINT', stop)
  })
}

if (require.main === module) main()
