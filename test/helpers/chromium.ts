// What the browser tests share: Debian's Chromium (through playwright-core),
// the reason to skip when it is not installed, and a headless launch with a
// fresh temporary profile that closing removes.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** Why a browser test cannot run here, or undefined when it can. */
export function chromiumMissing(): string | undefined {
  return existsSync(CHROMIUM) ? undefined : `Chromium is not installed at ${CHROMIUM} (apt-get install -y chromium; .ci/run does it)`
}

export interface Chromium {
  context: BrowserContext
  /** Closes the browser and removes its profile. */
  close(): Promise<void>
}

export async function launchChromium(): Promise<Chromium> {
  const { chromium } = await import('playwright-core')
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'))
  try {
    // A persistent context is how playwright takes a fresh --user-data-dir.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    return {
      context,
      async close() {
        await context.close()
        rmSync(profile, { recursive: true, force: true })
      },
    }
  } catch (err) {
    rmSync(profile, { recursive: true, force: true })
    throw err
  }
}
