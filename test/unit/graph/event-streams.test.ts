// The WebSocket streams' bookkeeping is an object the server owns
// (EventStreams, src/graph/ws-stream.ts), not module state: two servers in
// one process count and end only their own streams.
import t from 'tap'
import { CLOSE } from '../../../src/graph/event-stream'
import { EventStreams } from '../../../src/graph/ws-stream'

type Behavior = ReturnType<EventStreams['behavior']>
type Socket = Parameters<NonNullable<Behavior['open']>>[0]

interface FakeSocket { socket: Socket; ended: number[] }

function fakeSocket(tenant: string): FakeSocket {
  const ended: number[] = []
  const data = { tenant, after: undefined, token: 't', stream: undefined }
  const socket = { getUserData: () => data, end: (code: number) => { ended.push(code) } } as unknown as Socket
  return { socket, ended }
}

t.test('each EventStreams counts and ends only its own sockets', async (t) => {
  const a = new EventStreams()
  const b = new EventStreams()
  // Without services (the server is starting) a stream is refused at once, but it is counted until its close.
  const onA = a.behavior(() => undefined)
  const onB = b.behavior(() => undefined)
  const s1 = fakeSocket('acme')
  const s2 = fakeSocket('acme')
  onA.open!(s1.socket)
  onA.open!(s2.socket)
  t.equal(a.count('acme'), 2)
  t.equal(b.count('acme'), 0, 'the other server has none')
  t.same(s1.ended, [CLOSE.tryAgainLater])

  const s3 = fakeSocket('acme')
  onB.open!(s3.socket)
  b.endAll()
  t.same(s3.ended, [CLOSE.tryAgainLater, CLOSE.goingAway], 'ends its own')
  t.same(s1.ended, [CLOSE.tryAgainLater], 'not the other server\'s')

  onA.close!(s1.socket, 1000, new ArrayBuffer(0))
  t.equal(a.count('acme'), 1)
  onA.close!(s2.socket, 1000, new ArrayBuffer(0))
  t.equal(a.count('acme'), 0)
  a.endAll()
  t.same(s2.ended, [CLOSE.tryAgainLater], 'a closed socket is not ended again')
})
