// The two meta pages at the start of an LMDB data file, read without LMDB:
// the start-up checks and the checkpoint (lmdb-checkpoint.ts) need them
// before LMDB may open the file. Offsets of the LMDB build lmdb-js ships
// (its mdb.c: a 24-byte page header, then MDB_meta; pinned in
// package-lock.json, checked by test/store/lmdb-checkpoint.test.ts).
import { closeSync, openSync, readSync } from 'node:fs'

const MAGIC = 0xbeefc0de
const META = { magic: 24, pageSize: 48, lastPage: 144, txnId: 152 } as const

export interface MetaPages {
  pageSize: number
  /** Of the newer meta page: the transaction that wrote it, and the last page it uses. */
  txnid: number
  lastPage: number
  /** Pages 0 and 1, as they are. */
  bytes: Buffer
}

/** Undefined when the file does not start with an LMDB meta page of a plausible page size. */
export function readMetaPages(path: string): MetaPages | undefined {
  const fd = openSync(path, 'r')
  try {
    const head = Buffer.alloc(META.pageSize + 4)
    if (readSync(fd, head, 0, head.length, 0) < head.length || head.readUInt32LE(META.magic) !== MAGIC) return undefined
    const pageSize = head.readUInt32LE(META.pageSize)
    if (pageSize < 512 || pageSize > 65536) return undefined
    const bytes = Buffer.alloc(2 * pageSize)
    const read = readSync(fd, bytes, 0, bytes.length, 0)
    const second = read === bytes.length && bytes.readUInt32LE(pageSize + META.magic) === MAGIC ? pageSize : undefined
    const newest = second !== undefined && bytes.readBigUInt64LE(second + META.txnId) > bytes.readBigUInt64LE(META.txnId) ? second : 0
    return {
      pageSize,
      txnid: Number(bytes.readBigUInt64LE(newest + META.txnId)),
      lastPage: Number(bytes.readBigUInt64LE(newest + META.lastPage)),
      bytes: bytes.subarray(0, read),
    }
  } finally {
    closeSync(fd)
  }
}
