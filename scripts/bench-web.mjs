// The web UI in npm run bench: what a browser downloads (raw and gzip), how fast the daemon serves the shell
// and the bundle, and how long Debian's Chromium takes from navigation to a usable conversations page,
// cold (new profile, nothing cached) and warm (reload). Numbers only; no assertion.
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { gzipSync } from 'node:zlib'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

function startDaemon(bin, dataDir) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HANGAR_LOG_LEVEL: 'warn' }
    for (const name of Object.keys(env))
      if (name.startsWith('HANGAR_') && name !== 'HANGAR_LOG_LEVEL') delete env[name]
    const child = spawn(process.execPath, [bin, 'up', '--port', '0', '--data-dir', dataDir], {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const url = /listening on (\S+)/.exec(out)?.[1]
      const link = /Sign in: (\S+)/.exec(out)?.[1]
      if (url && link) resolve({ child, url, link })
    })
    child.on('exit', (code) => reject(new Error(`daemon exited ${code}: ${out}`)))
  })
}

async function timed(count, action) {
  const samples = []
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    await action()
    samples.push(performance.now() - started)
  }
  return samples
}

export async function benchWeb(root) {
  const webDir = path.join(root, 'dist/web')
  const assets = readdirSync(path.join(webDir, 'assets')).map((name) => {
    const body = readFileSync(path.join(webDir, 'assets', name))
    return { name, raw: body.length, gzip: gzipSync(body).length }
  })
  const script = assets.find((asset) => asset.name.endsWith('.js'))
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-web-'))
  const daemon = await startDaemon(path.join(root, 'dist/bin/hangar.js'), dataDir)
  const fetchAll = (url, headers = {}) => fetch(url, { headers }).then((response) => response.arrayBuffer())
  try {
    await timed(50, () => fetchAll(`${daemon.url}/`))
    const shell = await timed(500, () => fetchAll(`${daemon.url}/conversations`))
    const bundle = await timed(500, () =>
      fetchAll(`${daemon.url}/assets/${script.name}`, { 'accept-encoding': 'gzip' }),
    )
    const result = { assets, shell, bundle, browser: null }
    if (!existsSync(CHROMIUM)) return { ...result, browser: `no Chromium at ${CHROMIUM}` }
    const { chromium } = await import('playwright-core')
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
      ],
    })
    try {
      const signIn = await browser.newContext()
      const first = await signIn.newPage()
      await first.goto(daemon.link)
      await first.waitForURL(/\/conversations$/)
      const state = await signIn.storageState()
      await signIn.close()
      const ready = (page) => page.getByRole('region', { name: 'New conversation' }).waitFor()
      const cold = await timed(10, async () => {
        const context = await browser.newContext({ storageState: state, serviceWorkers: 'block' })
        const page = await context.newPage()
        await page.goto(`${daemon.url}/conversations`)
        await ready(page)
        await context.close()
      })
      const context = await browser.newContext({ storageState: state })
      const page = await context.newPage()
      await page.goto(`${daemon.url}/conversations`)
      await ready(page)
      const warm = await timed(10, async () => {
        await page.reload()
        await ready(page)
      })
      return { ...result, browser: { cold, warm } }
    } finally {
      await browser.close()
    }
  } finally {
    daemon.child.kill('SIGTERM')
    await new Promise((resolve) => daemon.child.on('exit', resolve))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export function printWebBench(result, summary) {
  const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`
  console.log('web UI:')
  for (const asset of result.assets) console.log(`  ${asset.name}: ${kb(asset.raw)} (${kb(asset.gzip)} gzip)`)
  console.log(`  GET /conversations (app shell): ${summary(result.shell, ' ms')}`)
  console.log(`  GET the script bundle, gzip:   ${summary(result.bundle, ' ms')}`)
  if (typeof result.browser === 'string') console.log(`  browser load: not measured (${result.browser})`)
  else {
    console.log(
      `  Chromium, navigation → conversations page usable, cold: ${summary(result.browser.cold, ' ms')}`,
    )
    console.log(
      `  Chromium, reload → conversations page usable, warm:     ${summary(result.browser.warm, ' ms')}`,
    )
  }
}
