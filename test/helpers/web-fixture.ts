// Test-only: what a web UI suite starts with — a temp root with a project directory (a git repository,
// with the given files committed or not), the built daemon (`hangar up`) serving it on loopback with a clean
// environment, its owner's token, and Chromium with a context whose pages record uncaught errors.
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { launchChromium } from './browser.js'
import { cleanEnv, readDaemonToken, type RunningDaemon, startDaemon } from './hangar-cli.js'
import { makeTempDir } from './store-engines.js'

export interface WebFixtureOptions {
  /** Prefix of the temp root. */
  prefix: string
  /** The project directory's name under the root (default `project`). */
  projectName?: string
  /** Files written into the project before the daemon starts (e.g. `hangar.yaml`). */
  files?: Record<string, string>
  /** Commit the files (a repository with a first commit on `main`); default: `git init` only. */
  commit?: boolean
  /** Directories put first on the daemon's PATH (fake CLIs). */
  pathFirst?: string[]
  /** Added to the daemon's clean environment. */
  env?: Record<string, string>
  viewport?: { width: number; height: number }
}

export interface WebFixture {
  root: string
  project: string
  dataDir: string
  daemon: RunningDaemon
  /** The owner's token the daemon wrote to daemon.json. */
  token: string
  browser: Browser
  context: BrowserContext
  /** Every uncaught error of the pages opened with `newPage`. */
  pageErrors: string[]
  newPage(): Promise<Page>
  close(): Promise<void>
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd })
}

export async function startWebFixture(options: WebFixtureOptions): Promise<WebFixture> {
  const root = await makeTempDir(options.prefix)
  const project = path.join(root, options.projectName ?? 'project')
  const dataDir = path.join(root, 'data')
  await mkdir(project)
  for (const [name, text] of Object.entries(options.files ?? {}))
    await writeFile(path.join(project, name), text)
  git(project, 'init', '-q', '-b', 'main')
  if (options.commit) {
    git(project, 'add', '.')
    git(project, 'commit', '-q', '--allow-empty', '-m', 'first')
  }
  const env = cleanEnv({
    PATH: [...(options.pathFirst ?? []), path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
    HOME: root,
    ...options.env,
  })
  const daemon = await startDaemon(['--data-dir', dataDir], { env, cwd: project, timeoutMs: 60_000 })
  const token = await readDaemonToken(dataDir)
  const browser = await launchChromium()
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 860 } })
  const pageErrors: string[] = []
  return {
    root,
    project,
    dataDir,
    daemon,
    token,
    browser,
    context,
    pageErrors,
    async newPage() {
      const page = await context.newPage()
      page.on('pageerror', (error) => pageErrors.push(error.message))
      return page
    },
    async close() {
      await browser.close()
      await daemon.stop()
      await rm(root, { recursive: true, force: true })
    },
  }
}
