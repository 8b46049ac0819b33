// What build this process runs, for the `build_info` metric: the package's
// version, the git commit (BUILD_COMMIT, else the file the build wrote, else
// "unknown") and Node's version. Read once at start; git never runs here.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { Gauge } from 'prom-client'
import { registry } from './metrics'

export interface BuildInfo { version: string; commit: string; node: string }

/** Written by `npm run build` (write-build-info.ts) beside the compiled code. */
export const BUILD_INFO_FILE = 'build-info.json'
const COMMIT = /^[0-9a-f]{7,40}$/

/** The repository's root: the first directory up from here with a package.json (src/ runs in tests, dist/src/ in production). */
export function packageRoot(from = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`)
  }
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** A commit is a label value: anything but a hex hash is "unknown", so no environment can put arbitrary text into a scrape. */
const commitOf = (value: unknown): string | undefined => (typeof value === 'string' && COMMIT.test(value.toLowerCase()) ? value.toLowerCase() : undefined)

export function buildInfo(env: NodeJS.ProcessEnv = process.env, root = packageRoot()): BuildInfo {
  const version = readJson(join(root, 'package.json'))?.version
  const commit = commitOf(env.BUILD_COMMIT) ?? commitOf(readJson(join(root, 'dist', BUILD_INFO_FILE))?.commit) ?? 'unknown'
  return { version: typeof version === 'string' ? version : 'unknown', commit, node: process.version }
}

/** Registers `build_info` (once, at start: src/operations/sources.ts). */
export function registerBuildInfo(info: BuildInfo = buildInfo()): void {
  new Gauge({ name: 'build_info', help: 'Always 1: the package version, the git commit it was built from (unknown when not known) and the Node.js version', labelNames: ['version', 'commit', 'node'] as const, registers: [registry] })
    .labels(info.version, info.commit, info.node)
    .set(1)
}
