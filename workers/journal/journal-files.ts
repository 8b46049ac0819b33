// The journal's only door to the file system, so that a test can stand in
// for a power loss: with JOURNAL_SYNC_TRACE set (tests only), every
// completed fdatasync appends "<file> <length>" to that file, and the test
// cuts each journal file back to its last synced length after a kill -9
// (test/fault/journal-power-loss.test.ts).
import { appendFileSync, closeSync, existsSync, statSync, fdatasync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, ftruncateSync, unlinkSync, writeSync, fsyncSync } from 'node:fs'
import { join } from 'node:path'
import { syncPath } from '../../src/crypto/synced-files'

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

export function openAppend(path: string): AppendFile {
  const fd = openSync(path, 'a')
  let length = fstatSync(fd).size
  return {
    path,
    get length() { return length },
    append(bytes) {
      let done = 0
      try {
        while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done)
      } catch (err) {
        // A full disk cuts a record short: what was written of it goes, so the next record follows a whole one.
        if (done > 0) ftruncateSync(fd, length)
        throw err
      }
      length += bytes.length
    },
    cutTo(to) {
      ftruncateSync(fd, to)
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
