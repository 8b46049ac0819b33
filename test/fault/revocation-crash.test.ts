// kill -9 in the middle of revocations: after every restart each consent is
// consistent: granted with its data readable and writable, or revoked with
// its writes refused; never granted with a destroyed key (all its writes 500).
import t from 'tap'
import { Graph, call, createConsent } from '../helpers/client'
import { getToken, removeDir, startServer, tempDir } from '../helpers/server'
import { sleep } from '../../bench/wait'

// Many server starts (or much data): more than .taprc's per-file limit on a loaded 2-core machine.
t.setTimeout(600_000)

const ROUNDS = 5
const CONSENTS = 12

t.test('revocations interrupted by SIGKILL leave every consent consistent', async (t) => {
  const dir = tempDir('revoke-crash-')
  t.teardown(() => removeDir(dir))
  const known: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const server = await startServer({ dataDir: dir })
    const token = await getToken(server.url)
    const auth = { authorization: `Bearer ${token}` }
    // Check what the previous kill left.
    for (const consent of known) {
      const g = new Graph(server.url, 'demo', token, consent)
      const status = (await g.get(`consents/${consent}`)).json<{ status: string }>().status
      const write = await g.put(`nodes/core/customer/${consent}-check`, { name: 'check' })
      if (status === 'granted') {
        t.equal(write.status, 204, `round ${round}: granted consent ${consent} takes writes`)
        t.equal((await g.get(`nodes/core/customer/${consent}`)).status, 200, 'and its data reads')
      } else {
        t.equal(status, 'revoked')
        t.equal(write.status, 403, `round ${round}: revoked consent ${consent} refuses writes`)
      }
    }
    const fresh = await Promise.all(Array.from({ length: CONSENTS }, () => createConsent(server.url, 'demo', token, `s${round}`)))
    for (const consent of fresh) {
      t.equal((await new Graph(server.url, 'demo', token, consent).put(`nodes/core/customer/${consent}`, { name: 'x' })).status, 204)
    }
    known.push(...fresh)
    // Revoke them all, with writes racing, and kill the process in the middle.
    const inflight = fresh.map((consent, i) => new Promise<void>((resolve) => setTimeout(() => {
      void call('DELETE', `${server.url}/graph/v1/demo/consents/${consent}`, auth).catch(() => undefined).then(() => resolve())
    }, i * 3)))
    const racing = fresh.map((consent) => new Graph(server.url, 'demo', token, consent).put(`nodes/core/customer/${consent}-race`, { name: 'r' })
      .then((res) => res.status, () => 0))
    await sleep(5 + round * 7)
    await server.kill()
    await Promise.all(inflight)
    const statuses = await Promise.all(racing)
    t.same(statuses.filter((s) => s !== 0 && s !== 204 && s !== 403), [], `round ${round}: racing writes answered 204 or 403 or not at all`)
  }
})
