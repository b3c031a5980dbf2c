// Real Chromium for the web UI suites: Debian's build (.ci/run installs it), driven by playwright-core.
// Nothing but loopback: the flags turn off Chromium's own background traffic (updates, sync, field trials).
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Screenshots the suites leave behind for people to look at (CI keeps the folder as an artifact). */
export const ARTIFACTS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../test-artifacts/web-ui',
)

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `${CHROMIUM_PATH} is missing: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM_PATH`,
    )
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      // Root in CI: Chromium's sandbox needs user namespaces it may not have.
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-features=Translate,OptimizationHints,MediaRouter',
    ],
  })
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(ARTIFACTS_DIR, { recursive: true })
  const file = path.join(ARTIFACTS_DIR, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  return file
}
