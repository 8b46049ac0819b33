// GET /account: the page where a shop's customer sees and controls their data
// (docs/manual/account-page.md). Static markup and one script of its own
// (account.js beside this file, read once), under the sign-in page's CSP plus
// script-src for that script only. The script signs in with the built-in
// public client (src/auth/models/account-client.ts), code flow and PKCE, and
// calls the graph API with the user's token.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Exchange } from '../../../http/exchange'
import { packageRoot } from '../../../telemetry/build-info'
import { sendPage } from '../../helpers/html'

let assets: { script: string; style: string } | undefined

function pageAssets(): { script: string; style: string } {
  if (assets === undefined) {
    const dir = join(packageRoot(), 'src', 'auth', 'endpoints', 'account')
    assets = { script: readFileSync(join(dir, 'account.js'), 'utf8'), style: readFileSync(join(dir, 'account.css'), 'utf8') }
  }
  return assets
}

// Every element the script fills is here; it writes text, never markup.
const BODY = `<header class="top">
<h1>Your data</h1>
<p id="who" class="who"></p>
<button type="button" id="sign-out" class="plain" hidden>Sign out</button>
</header>
<p id="status" class="status" role="status" aria-live="polite"></p>
<noscript><p class="status error">This page needs JavaScript to sign you in and show your data.</p></noscript>
<section id="signed-out" hidden>
<p>Shops you buy from may store what they learn about you here, each piece under a consent you gave. Sign in to see your consents, take any of them back, download your data or erase it.</p>
<button type="button" id="sign-in">Sign in</button>
</section>
<section id="account" hidden>
<nav id="tenants" class="tenants" aria-label="Shops"></nav>
<section id="tenant" hidden>
<h2 id="tenant-name"></h2>
<div class="actions">
<button type="button" id="download">Download my data</button>
<button type="button" id="erase" class="danger">Erase my data</button>
</div>
<div id="confirm" class="confirm" role="alertdialog" aria-labelledby="confirm-text" hidden>
<p id="confirm-text"></p>
<div class="actions">
<button type="button" id="confirm-yes" class="danger">Yes</button>
<button type="button" id="confirm-no" class="plain">Cancel</button>
</div>
</div>
<h3>Consents</h3>
<p id="empty" hidden>No consents: this shop stores nothing about you here.</p>
<ul id="consents" class="consents"></ul>
</section>
</section>`

export function sendAccountPage(ex: Exchange): void {
  const { script, style } = pageAssets()
  sendPage(ex, 200, { title: 'Your data', body: BODY, mainClass: 'account', style, script })
}
