// A standard third-party client, not ours: Python's authlib introspects a
// live token, revokes it and introspects it again (RFC 7662, RFC 7009).
// Skipped with the reason where Debian's python3-authlib is not installed
// (.ci/run installs it).
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { codeFor, oauthServerForFile, tokenOk, VIEW, WEB_AUTH } from '../helpers/oauth'
import { ROOT } from '../helpers/server'

const PYTHON = '/usr/bin/python3'
const hasAuthlib = spawnSync(PYTHON, ['-c', 'import authlib, requests'], { stdio: 'ignore' }).status === 0

if (!hasAuthlib) {
  t.plan(0, `authlib is not installed for ${PYTHON} (apt-get install -y python3-authlib python3-requests; .ci/run does it)`)
} else {
  const env = oauthServerForFile(t)
  t.test('authlib introspects a live token, revokes it, and sees it inactive', async (t) => {
    const { code } = await codeFor(env.issuer, { client_id: 'web-app', redirect_uri: 'http://127.0.0.1:65530/callback', scope: `openid ${VIEW}` }, 'alice', 'alice-password')
    const tokens = await tokenOk(env.issuer, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:65530/callback' }, WEB_AUTH)
    const out = execFileSync(PYTHON, [join(ROOT, 'test', 'clients', 'authlib_introspect.py'), env.issuer, 'web-app', 'web-secret', tokens.access_token], { encoding: 'utf8', timeout: 60_000 })
    const seen = JSON.parse(out.trim().split('\n').pop()!) as { live: [number, Record<string, unknown>]; revoke: number; dead: [number, Record<string, unknown>] }
    t.equal(seen.live[0], 200)
    t.match(seen.live[1], { active: true, client_id: 'web-app', sub: 'alice', token_type: 'Bearer', scope: tokens.scope })
    t.equal(seen.revoke, 200)
    t.same(seen.dead, [200, { active: false }])
  })
}
