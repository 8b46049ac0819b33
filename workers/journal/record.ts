// One journal record: [body length u32][CRC-32C of the body u32][body], the
// body being [position f64][payload]. Positions rise by one per record across
// a shard's segments, so a start knows which records its LMDB already holds.
import { crc32c } from './crc32c'

const HEADER = 8
const POSITION = 8

export function encodeRecord(position: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(HEADER + POSITION + payload.length)
  out.writeUInt32LE(POSITION + payload.length, 0)
  out.writeDoubleLE(position, HEADER)
  out.set(payload, HEADER + POSITION)
  out.writeUInt32LE(crc32c(out, HEADER), 4)
  return out
}

export interface JournalRecord {
  position: number
  payload: Buffer
}

/** What a segment's bytes hold: its whole records, and where the good part ends. */
export interface DecodedSegment {
  records: JournalRecord[]
  /** Bytes of whole, checked records from the start. */
  goodLength: number
  /**
   * 'clean': nothing after goodLength but zeros (a preallocated segment's
   * unwritten part). 'torn': the bytes after goodLength are an unfinished
   * last record: cut them. 'damaged': a
   * record fails its check and more follows it: the file was damaged, not torn.
   */
  tail: 'clean' | 'torn' | 'damaged'
}

export function decodeSegment(bytes: Buffer): DecodedSegment {
  const records: JournalRecord[] = []
  let at = 0
  while (at < bytes.length) {
    // Zeros to the end: the part of a preallocated segment not written yet.
    if (onlyZerosAfter(bytes, at)) return { records, goodLength: at, tail: 'clean' }
    if (bytes.length - at < HEADER) return { records, goodLength: at, tail: 'torn' }
    const length = bytes.readUInt32LE(at)
    const end = at + HEADER + length
    if (length < POSITION || end > bytes.length) {
      return { records, goodLength: at, tail: onlyZerosAfter(bytes, at) || end > bytes.length ? 'torn' : 'damaged' }
    }
    if (bytes.readUInt32LE(at + 4) !== crc32c(bytes, at + HEADER, end)) {
      // The last record cut short by a power loss fails its check too; anything after it says otherwise.
      return { records, goodLength: at, tail: end === bytes.length || onlyZerosAfter(bytes, end) ? 'torn' : 'damaged' }
    }
    records.push({ position: bytes.readDoubleLE(at + HEADER), payload: bytes.subarray(at + HEADER + POSITION, end) })
    at = end
  }
  return { records, goodLength: at, tail: 'clean' }
}

function onlyZerosAfter(bytes: Buffer, from: number): boolean {
  for (let i = from; i < bytes.length; i++) if (bytes[i] !== 0) return false
  return true
}
