// A scratch git project named "shop" (with a HOME beside it) and a feed service on loopback that answers
// every path with `<text> (<path>)` and remembers who asked: the setup of the proxy suites with real CLIs.
import { execFileSync } from 'node:child_process'
import { mkdir, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { privateScratchRoot } from './real-cli-cases.js'

export interface FeedProject {
  root: string
  home: string
  project: string
  feedUrl: string
  feedHits: { url: string; headers: IncomingHttpHeaders }[]
  close(): Promise<void>
}

export async function startFeedProject(name: string, feedText: string): Promise<FeedProject> {
  const feedHits: FeedProject['feedHits'] = []
  const server = createServer((req, res) => {
    feedHits.push({ url: req.url ?? '', headers: req.headers })
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(`${feedText} (${req.url})`)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const root = await privateScratchRoot(name)
  const home = path.join(root, 'home')
  const project = path.join(root, 'shop')
  await mkdir(home, { recursive: true })
  await mkdir(project)
  execFileSync('git', ['init', '-q'], { cwd: project })
  return {
    root,
    home,
    project,
    feedUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    feedHits,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await rm(root, { recursive: true, force: true })
    },
  }
}
