// The test helper's nats-server: JetStream answers, and teardown removes the store directory.
import t from 'tap'
import { existsSync } from 'node:fs'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { natsServerAvailable, startNatsServer } from '../helpers/nats-server'

t.test('a local JetStream server starts, answers and is removed', { skip: natsServerAvailable() ? false : 'nats-server not installed' }, async (t) => {
  const server = await startNatsServer()
  const nc = await connect({ servers: server.url })
  const jsm = await jetstreamManager(nc)
  const info = await jsm.getAccountInfo()
  t.equal(info.streams, 0)
  await nc.close()
  await server.stop()
  t.notOk(existsSync(server.storeDir))
})
