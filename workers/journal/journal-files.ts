// The journal's only door to the file system, so that a test can stand in
// for a power loss: with JOURNAL_SYNC_TRACE set (tests only), every
// completed fdatasync appends "<file> <length>" to that file, and the test
// cuts each journal file back to its last synced length after a kill -9
// (test/fault/journal-power-loss.test.ts).
import { appendFileSync, closeSync, existsSync, statfsSync, statSync, fdatasync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, ftruncateSync, unlinkSync, writeSync, fsyncSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { open, unlink } from 'node:fs/promises'
import { syncPath, syncPathAsync } from '../../src/crypto/synced-files'

const SYNC_TRACE = process.env.JOURNAL_SYNC_TRACE

export interface AppendFile {
  readonly path: string
  /** Bytes written so far. */
  readonly length: number
  append(bytes: Uint8Array): void
  /** Cuts the file back to `length` bytes (a record taken back before it was synced). */
  cutTo(length: number): void
  /** Resolves once every byte appended before the call is on the disk. */
  sync(): Promise<void>
  close(): void
}

/**
 * Opens a segment to append to from byte 0. A file that is already `allocated`
 * bytes long (zeros written and synced: preallocate()) is written over in
 * place, so an fdatasync there has no file size to record, only the data:
 * the cheapest sync a disk has. Past that, writes extend the file.
 */
export function openAppend(path: string): AppendFile {
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w')
  const allocated = fstatSync(fd).size
  let length = 0
  /** Takes bytes back: zeros over what lies in the allocated part, the file cut back past it. */
  const cut = (to: number, end: number): void => {
    if (to < allocated) writeSync(fd, Buffer.alloc(Math.min(end, allocated) - to), 0, Math.min(end, allocated) - to, to)
    if (end > allocated) ftruncateSync(fd, Math.max(to, allocated))
  }
  return {
    path,
    get length() { return length },
    append(bytes) {
      let done = 0
      try {
        while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, length + done)
      } catch (err) {
        // A full disk cuts a record short: what was written of it goes, so the next record follows a whole one.
        if (done > 0) cut(length, length + done)
        throw err
      }
      length += bytes.length
    },
    cutTo(to) {
      cut(to, length)
      length = to
    },
    sync() {
      const through = length
      return new Promise((resolve, reject) => fdatasync(fd, (err) => {
        if (err !== null) return reject(err)
        if (SYNC_TRACE !== undefined) appendFileSync(SYNC_TRACE, `${path} ${through}\n`)
        resolve()
      }))
    },
    close() { closeSync(fd) },
  }
}

/**
 * Makes `path` a file of `bytes` zeros, written and synced (its directory
 * entry too), without blocking the thread: a segment to come.
 */
export async function preallocate(path: string, bytes: number): Promise<void> {
  const file = await open(path, 'w')
  try {
    const zeros = Buffer.alloc(1024 * 1024)
    for (let at = 0; at < bytes; at += zeros.length) await file.write(zeros, 0, Math.min(zeros.length, bytes - at), at)
    await file.datasync()
  } finally {
    await file.close()
  }
  await syncPathAsync(dirname(path))
}

/** Bytes free for this process on the file system of `dir`. */
export function freeBytes(dir: string): number {
  const fs = statfsSync(dir)
  return fs.bavail * fs.bsize
}

export function readWhole(path: string): Buffer {
  return readFileSync(path)
}

/** Cuts a torn tail off, durably. */
export function truncateTo(path: string, length: number): void {
  const fd = openSync(path, 'r+')
  try {
    ftruncateSync(fd, length)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** The files of `dir` and their lengths, without making it (none when it does not exist). */
export function fileLengths(dir: string): { name: string; length: number }[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).map((name) => ({ name, length: statSync(join(dir, name)).size }))
}

export function listDir(dir: string): string[] {
  mkdirSync(dir, { recursive: true })
  return readdirSync(dir)
}

/** Removes files and makes the removal durable (the directory's entry). */
export function removeFiles(dir: string, names: readonly string[]): void {
  for (const name of names) unlinkSync(join(dir, name))
  syncPath(dir)
}

/** removeFiles without blocking the thread (a checkpoint's rotation, while the actor serves). */
export async function removeFilesAsync(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) await unlink(join(dir, name))
  await syncPathAsync(dir)
}

/** Makes a directory's entries durable without blocking the thread; the promise is marked handled, its awaiters still see a failure. */
export function syncDirAsync(dir: string): Promise<void> {
  const synced = syncPathAsync(dir)
  synced.catch(() => undefined)
  return synced
}
