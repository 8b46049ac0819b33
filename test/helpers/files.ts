// Searching files for bytes (a key, a plaintext value), for the tests that
// check what is at rest. Files that vanish while the search runs (a running
// nats-server compacting its store, a checkpoint removing journal segments)
// are skipped.
import { readFileSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

export function filesUnder(dir: string): string[] {
  const out: string[] = []
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return out
  }
  for (const name of names) {
    const p = join(dir, name)
    try {
      if (statSync(p).isDirectory()) out.push(...filesUnder(p))
      else out.push(p)
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/** Every file under `dir` with its bytes, as far as it is still there when read. */
export function contentsUnder(dir: string): { path: string; bytes: Buffer }[] {
  return filesUnder(dir).flatMap((path) => {
    try {
      return [{ path, bytes: readFileSync(path) }]
    } catch {
      return []
    }
  })
}

/** The files under `dir` that contain `needle`. */
export function holders(dir: string, needle: Buffer): string[] {
  return contentsUnder(dir).filter((f) => f.bytes.includes(needle)).map((f) => f.path)
}
