// Durable copies for backups: a file copied and fsynced, a directory's
// entries fsynced, so a backup that reported success survives a power loss.
// Here (not in src/lifecycle) because the shard actors copy key files too.
import { closeSync, copyFileSync, constants, fsyncSync, openSync } from 'node:fs'

/** fsync of a file or a directory (its entries). */
export function syncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Copies `from` to a new file `to` (never over an existing one) and syncs it. */
export function copyFileSynced(from: string, to: string): void {
  copyFileSync(from, to, constants.COPYFILE_EXCL)
  syncPath(to)
}
