// The request id kept as a stem and a counter (src/telemetry/request-id.ts):
// the bytes handed to uWebSockets.js as x-request-id are the id's text,
// whichever stem and counter, and a caller's id goes through as given.
import t from 'tap'
import { REQUEST_ID_HEADER, requestIdBytes, requestIdParts, requestIdText, type RequestIdParts } from '../../../src/telemetry/request-id'

const text = (bytes: ArrayBuffer | string): string => (typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('latin1'))

t.test('the header value is the id as text', async (t) => {
  t.equal(text(REQUEST_ID_HEADER), 'x-request-id')
  const other: RequestIdParts = { givenId: '', idStem: Buffer.from('0123abcd-0000-4000-8000-999'), idSeq: 0 }
  let bad = 0
  for (let i = 0; i < 20_000; i++) {
    // Generated ids, now and then one of another stem (the header's buffer keeps the last stem), and callers' ids.
    const id = i % 97 === 0 ? { ...other, idSeq: i * 31 } : i % 89 === 0 ? requestIdParts(`trace-${i}`, '') : requestIdParts('', '')
    if (text(requestIdBytes(id)) !== requestIdText(id)) bad++
  }
  t.equal(bad, 0)
  t.equal(requestIdText({ ...other, idSeq: 999_999_999 }), '0123abcd-0000-4000-8000-999999999999', 'the counter fills the last 9 digits')
  t.equal(requestIdText({ ...other, idSeq: 7 }), '0123abcd-0000-4000-8000-999000000007')
})
