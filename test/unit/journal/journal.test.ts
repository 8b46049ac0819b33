// The journal's records and segments: a cut anywhere (thousands of random
// cut points) leaves a prefix of whole records and is cut clean at the next
// read; a damaged byte before the tail refuses; positions continue across
// segments, checkpoints and reopenings.
import t from 'tap'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { crc32c } from '../../../workers/journal/crc32c'
import { decodeSegment, encodeRecord } from '../../../workers/journal/record'
import { SEGMENT_BYTES, ShardJournal } from '../../../workers/journal/shard-journal'
import { sleep, until } from '../../../bench/wait'

const segmentsIn = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.log')).sort()

const dirOf = (t: { teardown(fn: () => void): void }): string => {
  const dir = mkdtempSync(join(tmpdir(), 'journal-test-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A deterministic generator, so a failure names its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let x = Math.imul(s ^ (s >>> 15), 1 | s)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

t.test('CRC-32C: the standard check values', async (t) => {
  t.equal(crc32c(Buffer.from('123456789')), 0xe3069283)
  t.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa)
  // Eight bytes a step: every length and offset agrees with the byte-wise sum.
  const bytewise = (d: Uint8Array, from: number, to: number): number => {
    let crc = 0xffffffff
    for (let i = from; i < to; i++) {
      crc ^= d[i]!
      for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1
    }
    return (crc ^ 0xffffffff) >>> 0
  }
  const data = Uint8Array.from({ length: 80 }, (_, i) => (i * 151 + 7) & 0xff)
  let agree = 0
  for (let from = 0; from < 9; from++) for (let to = from; to <= data.length; to++) if (crc32c(data, from, to) === bytewise(data, from, to)) agree++
  t.equal(agree, Array.from({ length: 9 }, (_, from) => data.length - from + 1).reduce((a, b) => a + b), 'every slice')
})

t.test('a segment cut at any byte reads as a prefix of whole records, its tail torn', async (t) => {
  const next = random(7)
  const records = Array.from({ length: 40 }, (_, i) => encodeRecord(i + 1, Buffer.from('x'.repeat(Math.floor(next() * 300)) + i)))
  const whole = Buffer.concat(records)
  const ends: number[] = []
  records.reduce((at, r) => { ends.push(at + r.length); return at + r.length }, 0)
  for (let cut = 0; cut < 3000; cut++) {
    const at = Math.floor(next() * (whole.length + 1))
    const decoded = decodeSegment(whole.subarray(0, at))
    const wholeRecords = ends.filter((e) => e <= at).length
    if (decoded.records.length !== wholeRecords || (decoded.tail === 'damaged')) {
      t.fail(`cut at ${at}: ${decoded.records.length} records (${wholeRecords} whole), tail ${decoded.tail}`)
      return
    }
    if (decoded.records.some((r, i) => r.position !== i + 1)) t.fail(`cut at ${at}: positions out of order`)
    t.equal(decoded.goodLength, wholeRecords === 0 ? 0 : ends[wholeRecords - 1]!, `cut at ${at}`, { diagnostic: false })
  }
  // A preallocated segment's unwritten part (or what a file system leaves after the last synced byte): zeros.
  const zeros = decodeSegment(Buffer.concat([whole, Buffer.alloc(4096)]))
  t.equal(zeros.records.length, 40)
  t.equal(zeros.tail, 'clean')
})

t.test('a flipped byte in a record before the last is damage, not a torn tail', async (t) => {
  const next = random(11)
  const records = Array.from({ length: 20 }, (_, i) => encodeRecord(i + 1, Buffer.from(`payload ${i} ${'y'.repeat(50)}`)))
  const whole = Buffer.concat(records)
  const lastStart = whole.length - records[19]!.length
  for (let n = 0; n < 500; n++) {
    const copy = Buffer.from(whole)
    const at = 4 + Math.floor(next() * (lastStart - 4))
    copy[at] = copy[at]! ^ (1 + Math.floor(next() * 255))
    const decoded = decodeSegment(copy)
    if (decoded.tail === 'clean' || decoded.records.length === 20) t.fail(`a flip at ${at} went unseen`)
    if (decoded.tail === 'torn') {
      // Only a flip in a length field can make a record reach past the end: that reads as torn.
      t.ok(decoded.goodLength + 8 + copy.readUInt32LE(decoded.goodLength) > copy.length, `flip at ${at}: torn only when a length points past the end`)
    }
  }
})

t.test('append, durable, reopen: the records after what LMDB holds come back in order', async (t) => {
  const dir = dirOf(t)
  const { journal, replay } = ShardJournal.read(dir, 0)
  t.same(replay, [])
  journal.start()
  const positions = [1, 2, 3, 4, 5].map((i) => journal.append(Buffer.from(`r${i}`)))
  t.same(positions, [1, 2, 3, 4, 5])
  await Promise.all(positions.map((p) => journal.durable(p)))
  t.equal(journal.syncCount, 1, 'records appended together share one fdatasync')
  t.equal(journal.bytesAppended, positions.map((p) => encodeRecord(p, Buffer.from(`r${p}`)).length).reduce((a, b) => a + b), 'bytes appended are counted')
  journal.close()
  const again = ShardJournal.read(dir, 2)
  t.same(again.replay.map((r) => [r.position, r.payload.toString()]), [[3, 'r3'], [4, 'r4'], [5, 'r5']])
  t.equal(again.journal.lastPosition, 5)
  again.journal.start()
  t.equal(again.journal.append(Buffer.from('r6')), 6, 'positions go on')
  again.journal.close()
})

t.test('a checkpoint removes the older segments once LMDB holds them', async (t) => {
  const dir = dirOf(t)
  const { journal } = ShardJournal.read(dir, 0)
  journal.start()
  for (let i = 0; i < 10; i++) journal.append(Buffer.from(`a${i}`))
  let held = false
  const checkpoint = journal.checkpoint(async () => {
    t.same(segmentsIn(dir), ['0000000000000001.log', '0000000000000011.log'], 'a new segment takes the appends')
    held = true
  }, true)
  t.equal(journal.append(Buffer.from('during')), 11, 'appends go on during a checkpoint')
  await checkpoint
  t.ok(held)
  t.same(segmentsIn(dir), ['0000000000000011.log'])
  await journal.durable(11)
  journal.close()
  const { replay } = ShardJournal.read(dir, 10)
  t.same(replay.map((r) => r.payload.toString()), ['during'])
})

t.test('segments after the first are preallocated: written in place, their zeros read as the end', async (t) => {
  const dir = dirOf(t)
  const { journal } = ShardJournal.read(dir, 0)
  journal.start()
  journal.append(Buffer.from('first'))
  // The next segment is made ahead, in the background.
  await until('the next segment preallocated', () => existsSync(join(dir, 'next-segment')) && statSync(join(dir, 'next-segment')).size === SEGMENT_BYTES, 30_000)
  await sleep(50)
  let holding = false
  await journal.checkpoint(async () => { holding = true }, false)
  t.ok(holding, 'a checkpoint without rotation')
  t.same(segmentsIn(dir), ['0000000000000001.log'], 'keeps the segment')
  await journal.checkpoint(async () => undefined, true)
  t.same(segmentsIn(dir), ['0000000000000002.log'], 'a rotation takes the preallocated file')
  const segment = join(dir, '0000000000000002.log')
  t.equal(statSync(segment).size, SEGMENT_BYTES, 'at its full size')
  for (let i = 0; i < 3; i++) journal.append(Buffer.from(`p${i}`))
  t.ok(journal.cutLast(4), 'the last record taken back')
  await journal.durable(3)
  t.equal(statSync(segment).size, SEGMENT_BYTES, 'written in place: the size never changed')
  journal.close()
  const { replay } = ShardJournal.read(dir, 1)
  t.same(replay.map((r) => r.payload.toString()), ['p0', 'p1'], 'the records, then zeros read as the end')
})

t.test('a torn record followed only by empty segments is a power loss, not damage', async (t) => {
  const dir = dirOf(t)
  const whole = Buffer.concat([encodeRecord(1, Buffer.from('a')), encodeRecord(2, Buffer.from('b'))])
  writeFileSync(join(dir, '0000000000000001.log'), whole.subarray(0, whole.length - 3))
  // A checkpoint had begun the next segment, empty, when the power went.
  writeFileSync(join(dir, '0000000000000003.log'), Buffer.alloc(4096))
  const { replay, journal } = ShardJournal.read(dir, 0)
  t.same(replay.map((r) => r.position), [1], 'the torn record is cut')
  t.equal(journal.lastPosition, 1)
  journal.close()
  writeFileSync(join(dir, '0000000000000001.log'), whole.subarray(0, whole.length - 3))
  writeFileSync(join(dir, '0000000000000003.log'), encodeRecord(3, Buffer.from('c')))
  t.throws(() => ShardJournal.read(dir, 0), { message: /is damaged/ }, 'with records after it, a torn record is damage')
})

t.test('a torn tail is cut at the read; damage before it, or a gap, refuses', async (t) => {
  const dir = dirOf(t)
  const { journal } = ShardJournal.read(dir, 0)
  journal.start()
  for (let i = 0; i < 5; i++) journal.append(Buffer.from(`b${i}`.repeat(20)))
  await journal.durable(5)
  journal.close()
  const file = join(dir, '0000000000000001.log')
  const size = statSync(file).size
  truncateSync(file, size - 7)
  const torn = ShardJournal.read(dir, 0)
  t.equal(torn.replay.length, 4, 'the torn last record is gone')
  t.ok(statSync(file).size < size - 7, 'and cut from the file')
  torn.journal.close()

  const bytes = readFileSync(file)
  bytes[20] = bytes[20]! ^ 0xff
  writeFileSync(file, bytes)
  t.throws(() => ShardJournal.read(dir, 0), { message: /is damaged at byte 0/ })

  const gapDir = dirOf(t)
  writeFileSync(join(gapDir, '0000000000000005.log'), Buffer.concat([encodeRecord(5, Buffer.from('x'))]))
  t.throws(() => ShardJournal.read(gapDir, 2), { message: /records in between are missing/ }, 'LMDB holds 2, the journal starts at 5')
  t.equal(ShardJournal.read(gapDir, 4).replay.length, 1)
})

t.test('the last record, not yet synced, can be taken back; a synced one cannot', async (t) => {
  const dir = dirOf(t)
  const { journal } = ShardJournal.read(dir, 0)
  journal.start()
  journal.append(Buffer.from('kept'))
  await journal.durable(1)
  t.notOk(journal.cutLast(1), 'a durable record stays')
  const two = journal.append(Buffer.from('withdrawn'))
  t.ok(journal.cutLast(two), 'the last record, not synced, is cut')
  t.equal(journal.lastPosition, 1)
  t.equal(journal.append(Buffer.from('next')), 2, 'its position is taken again')
  await journal.durable(2)
  journal.close()
  t.same(ShardJournal.read(dir, 0).replay.map((r) => r.payload.toString()), ['kept', 'next'])
})
