// Starts the real server (the compiled entry) on a free port with a temporary
// data directory, through the process starter the bench uses too
// (bench/child.ts), and cleans everything up when the test ends.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { request } from 'undici'
import { Graph, createConsent } from './client'
import { startChild, type Child } from '../../bench/child'

export const ROOT = resolve(__dirname, '..', '..')
export const ENTRY = join(ROOT, 'dist', 'src', 'main.js')
export const FIXTURE_BOOTSTRAP = join(ROOT, 'test', 'fixtures', 'bootstrap.json')

/** A server under test: the bench's child process (bench/child.ts) and the data directory it was given. */
export interface Server extends Child {
  dataDir: string
}

export interface StartOptions {
  dataDir?: string
  args?: string[]
  env?: Record<string, string>
}

export function tempDir(prefix = 'graph-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** The compiled server on a free port, with the fixture bootstrap, `dataDir`/data and a master key in `dataDir`/secrets. */
export async function startServer(options: StartOptions = {}): Promise<Server> {
  const dataDir = options.dataDir ?? tempDir()
  const args = [
    '--port', '0', '--data-dir', join(dataDir, 'data'), '--bootstrap', FIXTURE_BOOTSTRAP,
    '--master-key-file', join(dataDir, 'secrets', 'master.key'), '--workers', '2', ...(options.args ?? []),
  ]
  const child = await startChild('server', ENTRY, args, { env: { ...process.env, ...options.env }, startTimeoutMs: 120_000 })
  return { ...child, dataDir }
}

/**
 * The compiled server as `npm start` runs it (its built-in demo bootstrap,
 * which the README's examples use) on a free port, in a new directory;
 * stopped and the directory removed at the test's teardown.
 */
export async function demoServer(t: { teardown(fn: () => Promise<void>): void }, prefix: string): Promise<Server> {
  const dataDir = tempDir(prefix)
  const child = await startChild('server', ENTRY, ['--port', '0', '--workers', '2', '--data-dir', join(dataDir, 'data'), '--master-key-file', join(dataDir, 'master.key')], { startTimeoutMs: 120_000 })
  t.teardown(async () => {
    await child.stop()
    removeDir(dataDir)
  })
  return { ...child, dataDir }
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
}

/** A client-credentials token for the fixture's demo client. */
export async function getToken(url: string, scope?: string, clientId = 'demo-enricher', secret = 'demo-secret'): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials' })
  if (scope !== undefined) form.set('scope', scope)
  const res = await request(`${url}/oauth2/v1/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form.toString(),
  })
  const body = (await res.body.json()) as { access_token?: string }
  if (res.statusCode !== 200 || body.access_token === undefined) throw new Error(`token request failed: ${res.statusCode} ${JSON.stringify(body)}`)
  return body.access_token
}

export interface FileFixture {
  server: Server
  token: string
  consent: string
  /** Tenant `demo` with that token and consent reference. */
  graph: Graph
}

/**
 * Starts one server for a whole test file (before the first test) and stops
 * it and removes its directory at teardown. Fields are set once started.
 */
export function serverForFile(tap: { before(fn: () => Promise<void>): void; teardown(fn: () => Promise<void>): void }, options: StartOptions = {}): FileFixture {
  const fixture = {} as FileFixture
  tap.before(async () => {
    fixture.server = await startServer(options)
    fixture.token = await getToken(fixture.server.url)
    fixture.consent = await createConsent(fixture.server.url, 'demo', fixture.token, 'subject-1')
    fixture.graph = new Graph(fixture.server.url, 'demo', fixture.token, fixture.consent)
  })
  tap.teardown(async () => {
    await fixture.server.stop()
    removeDir(fixture.server.dataDir)
  })
  return fixture
}

/**
 * A server of one test's own (options of its own): a token and a consent of
 * tenant `demo` as in serverForFile; stopped and its directory removed at the
 * test's teardown.
 */
export async function serverForTest(t: { teardown(fn: () => Promise<void>): void }, options: StartOptions = {}): Promise<FileFixture> {
  const server = await startServer(options)
  t.teardown(async () => {
    await server.stop()
    removeDir(server.dataDir)
  })
  const token = await getToken(server.url)
  const consent = await createConsent(server.url, 'demo', token, 'subject-1')
  return { server, token, consent, graph: new Graph(server.url, 'demo', token, consent) }
}
