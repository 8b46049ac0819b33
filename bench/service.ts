// How the bench starts the real server: the compiled entry, a free port, the
// bench's bootstrap file and a data directory inside the run's temp dir.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startChild, type Child } from './child'
import { onCleanup } from './cleanup'
import { writeBootstrap } from './fixture'

export const ROOT = resolve(__dirname, '..', '..')
export const SERVER_ENTRY = join(ROOT, 'dist', 'src', 'main.js')
export const CEILING_ENTRY = join(__dirname, 'ceiling.js')

/** A fresh temp directory, removed by the bench's cleanup (after the processes that use it have stopped). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  onCleanup(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface ServiceLayout {
  dataDir: string
  bootstrap: string
  masterKey: string
}

/** Writes the bootstrap file into `tmp` and says where everything goes. */
export function prepareService(tmp: string): ServiceLayout {
  const layout = { dataDir: join(tmp, 'data'), bootstrap: join(tmp, 'bootstrap.json'), masterKey: join(tmp, 'master.key') }
  writeBootstrap(layout.bootstrap)
  return layout
}

export function startService(layout: ServiceLayout, workers: number, cpuProfDir?: string): Promise<Child> {
  return startChild('service', SERVER_ENTRY, [
    '--port', '0', '--data-dir', layout.dataDir, '--bootstrap', layout.bootstrap, '--master-key-file', layout.masterKey, '--workers', String(workers),
  ], { nodeArgs: cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`], keepOutputChars: 1 << 20 })
}
