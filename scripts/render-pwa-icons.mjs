#!/usr/bin/env node
// Renders web/public/icon.svg to the PNG icons the web app manifest lists (browsers want 192 and 512 px
// PNGs to offer installation). Run it after changing the SVG; the PNGs are committed.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { chromium } from 'playwright-core'

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..')
const svg = readFileSync(path.join(root, 'web/public/icon.svg'), 'utf8')
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
})
try {
  for (const size of [192, 512]) {
    const page = await browser.newPage({ viewport: { width: size, height: size } })
    await page.setContent(
      `<html><body style="margin:0;background:transparent">${svg.replace('<svg ', `<svg width="${size}" height="${size}" `)}</body></html>`,
    )
    await page.screenshot({ path: path.join(root, `web/public/icon-${size}.png`), omitBackground: true })
    await page.close()
  }
} finally {
  await browser.close()
}
