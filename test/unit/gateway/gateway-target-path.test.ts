// The gateway's forwarded path: every reading of a dot segment (raw,
// percent-encoded in any case, doubly encoded, with ";params", behind an
// encoded "/" or "\") is resolved or refused; what is kept is forwarded as sent.
import t from 'tap'
import { ApiError } from '../../../src/core/errors'
import { forwardedSegments } from '../../../src/gateway/target-path'

const fwd = (path: string): string => forwardedSegments(path.split('/')).join('/')
const refused = (path: string): string => {
  try {
    forwardedSegments(path.split('/'))
  } catch (err) {
    if (err instanceof ApiError) return err.type
    throw err
  }
  return 'forwarded'
}

t.test('ordinary segments are forwarded as sent', async (t) => {
  t.equal(fwd('echo/a%2Fb/c'), 'echo/a%2Fb/c', 'an encoded "/" inside an id stays')
  t.equal(fwd('x%20y/%C3%A9'), 'x%20y/%C3%A9')
  t.equal(fwd('a//b'), 'a//b')
  t.equal(fwd('...'), '...', 'three dots are a name')
  t.equal(fwd('.hidden/a..b'), '.hidden/a..b')
})

t.test('dot segments inside the source path are resolved', async (t) => {
  t.equal(fwd('a/../b'), 'b')
  t.equal(fwd('a/./b'), 'a/b')
  t.equal(fwd('a/%2e%2E/b'), 'b')
  t.equal(fwd('a/b/%252e%252e/c'), 'a/c', 'doubly encoded')
  t.equal(fwd('a/..;x=1/b'), 'b', '"..;" as Tomcat reads it')
  t.equal(fwd('a/b/..'), 'a/', 'a trailing dot segment keeps the folder\'s "/"')
  t.equal(fwd('a/.'), 'a/')
})

t.test('a path that climbs above the source path is refused', async (t) => {
  for (const path of ['..', '../outside', '%2e%2e/outside', '%2E%2E/outside', 'x/%2E%2E/%2e%2e/%2e%2e/etc', '.%2e/x', '%2e./x',
    '..;/x', '%2e%2e;jsessionid=1/x', '%252e%252e/x', '%25252e%25252e/x', 'a/../../x', './../x']) {
    t.equal(refused(path), 'bad_request', path)
  }
})

t.test('a dot segment behind an encoded separator is refused, whichever way it is encoded', async (t) => {
  for (const path of ['..%2Foutside', 'x%2F..%2F..%2Fetc', 'a%5C..%5C..', '..%5coutside', 'a%252F..', 'ok/%2e%2e%2f..']) {
    t.equal(refused(path), 'bad_request', path)
  }
})
