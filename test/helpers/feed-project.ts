// A scratch git project named "shop" (with a HOME beside it) and a feed service on loopback that answers
// every path with `<text> (<path>)` (or what `respond` says for it) and remembers who asked: the setup of
// the proxy suites with real CLIs.
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

/** A feed's answer to the `hit`-th request (1-based, counted per path); undefined: the default text. */
export type FeedResponder = (path: string, hit: number) => { status: number; body: string } | undefined

export async function startFeedProject(
  name: string,
  feedText: string,
  respond?: FeedResponder,
): Promise<FeedProject> {
  const feedHits: FeedProject['feedHits'] = []
  const server = createServer((req, res) => {
    const url = req.url ?? ''
    feedHits.push({ url, headers: req.headers })
    const answer = respond?.(url, feedHits.filter((hit) => hit.url === url).length) ?? {
      status: 200,
      body: `${feedText} (${url})`,
    }
    res.writeHead(answer.status, { 'content-type': 'text/plain; charset=utf-8' })
    res.end(answer.body)
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
