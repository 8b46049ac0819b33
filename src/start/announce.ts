// The lines a started server prints on stdout (tests and scripts wait for
// `listening <bound address>`).
import { isDemoBootstrap, type Config } from '../config/load-config'
import type { Bootstrap } from '../bootstrap/bootstrap-file'
import type { ServerUrls } from './server-urls'

/** Only the shipped demo's credentials are printed: they are public; an operator's file holds real secrets. */
function printWelcome(config: Config, boot: Bootstrap, publicUrl: string): void {
  if (!isDemoBootstrap(config.bootstrap)) return
  const demo = boot.clients.find((c) => c.client_secret !== undefined && c.grant_types.includes('client_credentials'))
  if (demo === undefined) return
  console.log(`client ${demo.client_id} (tenant ${demo.tenant}), secret ${demo.client_secret}`)
  console.log(`get a token: curl -s -u '${demo.client_id}:${demo.client_secret}' -d grant_type=client_credentials ${publicUrl}/oauth2/v1/token`)
}

export function announce(config: Config, boot: Bootstrap, urls: ServerUrls): void {
  printWelcome(config, boot, urls.public)
  // The public URL, when set, on its own line before the bound address.
  if (config.publicUrl !== undefined) console.log(`public url ${urls.public}`)
  console.log(`listening ${urls.bound}`)
}
