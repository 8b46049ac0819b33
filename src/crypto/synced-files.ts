// Durable copies for backups: a file copied and fsynced, a directory's
// entries fsynced, so a backup that reported success survives a power loss.
// Here (not in src/lifecycle) because the shard actors copy key files too.
import { closeSync, copyFileSync, constants, fsyncSync, openSync } from 'node:fs'
import { open } from 'node:fs/promises'

/** fsync of a file or a directory (its entries). */
export function syncPath(path: string): void {
  const fd = openSync(path, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** syncPath on libuv's threads: for a thread that must not wait for the disk (a shard actor's checkpoints). */
export async function syncPathAsync(path: string): Promise<void> {
  const handle = await open(path, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Copies `from` to a new file `to` (never over an existing one) and syncs it. */
export function copyFileSynced(from: string, to: string): void {
  copyFileSync(from, to, constants.COPYFILE_EXCL)
  syncPath(to)
}
