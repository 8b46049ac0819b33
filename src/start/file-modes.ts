// The data directory holds usernames, e-mails, node ids, consent subjects
// and webhook URLs: only the process user may read it. The process umask
// makes every file created later 0600 (directories 0700), LMDB's included;
// what an earlier version or an operator left readable by others is
// tightened at start, with a warning naming how many entries were fixed.
import { chmodSync, lstatSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError } from '../config/load-config'
import { log } from '../telemetry/log'

/** Files and directories this process creates are for its user only. */
export function privateUmask(): void {
  process.umask(0o077)
}

/** Entries under `dir` (and `dir` itself) that group or others could use, each set to 0700/0600; returns how many. */
export function tightenModes(dir: string): number {
  let fixed = 0
  // The directory itself may be a symbolic link (to a volume); links inside it are not followed.
  const visit = (path: string, top = false): void => {
    const st = top ? statSync(path) : lstatSync(path)
    if (st.isSymbolicLink()) return
    const want = st.isDirectory() ? 0o700 : 0o600
    if ((st.mode & 0o077) !== 0) {
      try {
        chmodSync(path, want)
      } catch (err) {
        throw new ConfigError(`${path} is readable by others and cannot be made private: ${(err as Error).message}`)
      }
      fixed++
    }
    if (st.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir, true)
  return fixed
}

/** Creates the data directory 0700, or makes an existing one private (warning on stderr when it was not). */
export function privateDataDir(dir: string): void {
  let fixed: number
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    fixed = tightenModes(dir)
  } catch (err) {
    throw err instanceof ConfigError ? err : unusableDataDir(dir, err as NodeJS.ErrnoException)
  }
  if (fixed > 0) log.warn(`warning: ${fixed} entries of ${dir} were readable by other users; they are now owner-only (0700 directories, 0600 files)`)
}

/** The start's one line for a data directory this process cannot create, enter or read. */
function unusableDataDir(dir: string, err: NodeJS.ErrnoException): ConfigError {
  const at = err.path ?? dir
  const why = err.code === 'EEXIST' ? `${dir} is not a directory`
    : err.code === 'ENOTDIR' ? `a part of the path ${at} is a file, not a directory`
    : err.code === 'EACCES' || err.code === 'EPERM' ? `${at} may not be read or written by the user the server runs as (uid ${process.getuid?.() ?? '?'})`
    : err.message
  return new ConfigError(`data directory ${dir} cannot be used: ${why}; give --data-dir / DATA_DIR a directory this user owns (it is created if missing)`)
}
