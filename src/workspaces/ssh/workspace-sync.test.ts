// Shipping a workspace to a real OpenSSH server on loopback and bringing a run's changes back.
import { randomBytes } from 'node:crypto'
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectToSshd, startSshd, type TestSshd } from '../../../test/helpers/sshd.js'
import type { SshConnection } from './ssh-connection.js'
import { remoteKey, shipWorkspace, syncBack } from './workspace-sync.js'
import { gitIn } from '../../../test/helpers/git-fixture.js'

let sshd: TestSshd
let scratch: string
let connection: SshConnection

async function project(name: string): Promise<string> {
  const dir = path.join(scratch, name)
  await mkdir(dir, { recursive: true })
  gitIn(dir, 'init', '-q', '-b', 'main')
  await writeFile(path.join(dir, 'README.md'), '# demo\n')
  await writeFile(path.join(dir, 'gone.txt'), 'to be deleted\n')
  await writeFile(path.join(dir, '.gitignore'), 'node_modules/\n')
  gitIn(dir, 'add', '-A')
  gitIn(dir, 'commit', '-qm', 'initial')
  return dir
}

function connect(sshCommand = sshd.sshCommand): SshConnection {
  return connectToSshd(sshd, path.join(scratch, 'host'), sshCommand)
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-sync-'))
  sshd = await startSshd()
  connection = connect()
})

afterAll(async () => {
  await connection?.close()
  await sshd?.stop()
  await rm(scratch, { recursive: true, force: true })
})

describe('workspace sync over ssh', () => {
  it('ships commits and the uncommitted overlay, and brings new commits and changes back', async () => {
    const local = await project('roundtrip')
    await writeFile(path.join(local, 'README.md'), '# demo, edited locally\n')
    await writeFile(path.join(local, 'untracked.txt'), 'new here\n')
    await rm(path.join(local, 'gone.txt'))
    await mkdir(path.join(local, 'node_modules'))
    await writeFile(path.join(local, 'node_modules', 'big.js'), 'ignored\n')

    const { shipped, stats } = await shipWorkspace(connection, local, { branch: 'hangar/c1' })
    expect(stats.bundled).toBe(true)
    expect(shipped.remoteDir).toBe(path.join(scratch, 'host', 'workspaces', remoteKey(local)))
    const remote = shipped.remoteDir
    expect(await readFile(path.join(remote, 'README.md'), 'utf8')).toBe('# demo, edited locally\n')
    expect(await readFile(path.join(remote, 'untracked.txt'), 'utf8')).toBe('new here\n')
    expect(existsSync(path.join(remote, 'gone.txt'))).toBe(false)
    expect(existsSync(path.join(remote, 'node_modules'))).toBe(false)
    expect(gitIn(remote, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('hangar/c1')

    // The "agent" on the host: commits one change, leaves another uncommitted, deletes a file.
    await writeFile(path.join(remote, 'feature.ts'), 'export const x = 1\n')
    gitIn(remote, 'add', 'feature.ts')
    gitIn(remote, 'commit', '-qm', 'add feature')
    const remoteHead = gitIn(remote, 'rev-parse', 'HEAD')
    await writeFile(path.join(remote, 'notes.md'), 'work in progress\n')
    await rm(path.join(remote, 'untracked.txt'))

    const back = await syncBack(connection, shipped)
    expect(back.bundled).toBe(true)
    expect(gitIn(local, 'rev-parse', 'HEAD')).toBe(remoteHead)
    expect(gitIn(local, 'log', '-1', '--format=%s')).toBe('add feature')
    expect(await readFile(path.join(local, 'feature.ts'), 'utf8')).toBe('export const x = 1\n')
    expect(await readFile(path.join(local, 'notes.md'), 'utf8')).toBe('work in progress\n')
    expect(await readFile(path.join(local, 'README.md'), 'utf8')).toBe('# demo, edited locally\n')
    expect(existsSync(path.join(local, 'untracked.txt'))).toBe(false)
    expect(existsSync(path.join(local, 'gone.txt'))).toBe(false)
    expect(await readFile(path.join(local, 'node_modules', 'big.js'), 'utf8')).toBe('ignored\n')
    // Never a remote, on either side.
    expect(gitIn(local, 'remote')).toBe('')
    expect(gitIn(path.join(scratch, 'host', 'cache.git'), 'remote')).toBe('')
  })

  it('ships only the delta the second time', async () => {
    const local = await project('incremental')
    for (let index = 0; index < 50; index++)
      await writeFile(path.join(local, `file-${index}.txt`), randomBytes(4096).toString('hex'))
    gitIn(local, 'add', '-A')
    gitIn(local, 'commit', '-qm', 'many files')
    const first = await shipWorkspace(connection, local)
    await syncBack(connection, first.shipped)

    await writeFile(path.join(local, 'file-7.txt'), 'changed\n')
    const second = await shipWorkspace(connection, local)
    expect(second.stats.bundled).toBe(false)
    expect(second.stats.overlayFiles).toBe(1)
    expect(second.stats.bytes).toBeLessThan(first.stats.bytes / 4)
    expect(await readFile(path.join(second.shipped.remoteDir, 'file-7.txt'), 'utf8')).toBe('changed\n')

    gitIn(local, 'commit', '-qam', 'one more')
    const third = await shipWorkspace(connection, local)
    expect(third.stats.bundled).toBe(true)
    expect(third.stats.bytes).toBeLessThan(first.stats.bytes / 4)
    expect(gitIn(third.shipped.remoteDir, 'rev-parse', 'HEAD')).toBe(gitIn(local, 'rev-parse', 'HEAD'))
  })

  it('reports a concurrent local change as a conflict and applies nothing', async () => {
    const local = await project('conflict')
    const { shipped } = await shipWorkspace(connection, local)
    await writeFile(path.join(shipped.remoteDir, 'remote.txt'), 'from the host\n')
    await writeFile(path.join(local, 'README.md'), 'edited locally during the run\n')
    await expect(syncBack(connection, shipped)).rejects.toMatchObject({ code: 'conflict' })
    expect(existsSync(path.join(local, 'remote.txt'))).toBe(false)
    expect(await readFile(path.join(local, 'README.md'), 'utf8')).toBe('edited locally during the run\n')
  })

  it('leaves the local workspace untouched when the connection drops during sync-back, and a retry succeeds', async () => {
    const local = await project('dropped')
    const { shipped } = await shipWorkspace(connection, local)
    await writeFile(path.join(shipped.remoteDir, 'big.bin'), Buffer.alloc(256 * 1024, 7))
    gitIn(shipped.remoteDir, 'add', 'big.bin')
    gitIn(shipped.remoteDir, 'commit', '-qm', 'big')
    const before = gitIn(local, 'rev-parse', 'HEAD')

    // An ssh that loses the connection after a few bytes of the sync-back stream.
    const dropping = path.join(scratch, 'ssh-dropping')
    await writeFile(
      dropping,
      `#!/bin/sh\ncase "$*" in\n  *back.XXXXXX*) ssh "$@" | head -c 300; exit 255 ;;\n  *) exec ssh "$@" ;;\nesac\n`,
    )
    await chmod(dropping, 0o755)
    const flaky = connect(`${dropping} -F ${sshd.configFile}`)
    await expect(syncBack(flaky, shipped)).rejects.toMatchObject({ code: 'unavailable', retryable: true })
    expect(gitIn(local, 'rev-parse', 'HEAD')).toBe(before)
    expect(gitIn(local, 'status', '--porcelain')).toBe('')

    await syncBack(connection, shipped)
    expect(gitIn(local, 'log', '-1', '--format=%s')).toBe('big')
    expect((await readFile(path.join(local, 'big.bin'))).length).toBe(256 * 1024)
  })

  it('fails the sync-back, without an unhandled rejection, when the local unpack gives up while ssh is still open', async () => {
    const local = await project('stalled')
    const { shipped } = await shipWorkspace(connection, local)
    await writeFile(path.join(shipped.remoteDir, 'big.bin'), randomBytes(256 * 1024))
    gitIn(shipped.remoteDir, 'add', 'big.bin')
    gitIn(shipped.remoteDir, 'commit', '-qm', 'big')
    const before = gitIn(local, 'rev-parse', 'HEAD')

    // Corrupt bytes, then ssh closes its stdout but lives on: tar fails before ssh exits, so the
    // failed consumer must settle at once and stop ssh (vitest fails the file on an unhandled rejection).
    const stalling = path.join(scratch, 'ssh-stalling')
    await writeFile(
      stalling,
      `#!/bin/sh\ncase "$*" in\n  *back.XXXXXX*) head -c 300 /dev/zero; exec >&-; exec sleep 600 ;;\n  *) exec ssh "$@" ;;\nesac\n`,
    )
    await chmod(stalling, 0o755)
    const stalled = connect(`${stalling} -F ${sshd.configFile}`)
    await expect(syncBack(stalled, shipped)).rejects.toMatchObject({ code: 'unavailable' })
    expect(gitIn(local, 'rev-parse', 'HEAD')).toBe(before)
    expect(gitIn(local, 'status', '--porcelain')).toBe('')
  })

  it('ships a directory that is not a git repository as a tar, and back', async () => {
    const local = path.join(scratch, 'plain')
    await mkdir(path.join(local, 'src'), { recursive: true })
    await writeFile(path.join(local, 'src', 'a.txt'), 'a\n')
    await writeFile(path.join(local, 'b.txt'), 'b\n')
    const { shipped } = await shipWorkspace(connection, local)
    expect(shipped.kind).toBe('copy')
    await writeFile(path.join(shipped.remoteDir, 'src', 'a.txt'), 'a, edited remotely\n')
    await rm(path.join(shipped.remoteDir, 'b.txt'))
    await writeFile(path.join(shipped.remoteDir, 'c.txt'), 'c\n')
    await syncBack(connection, shipped)
    expect(await readFile(path.join(local, 'src', 'a.txt'), 'utf8')).toBe('a, edited remotely\n')
    expect(existsSync(path.join(local, 'b.txt'))).toBe(false)
    expect(await readFile(path.join(local, 'c.txt'), 'utf8')).toBe('c\n')
  })
})

// A ship ran `git checkout -f` and `git clean -fd` over the host copy even while it held an interrupted
// run's changes that were never brought back: the agent's work was deleted by the next run's ship.
describe('a host copy with unfinalized changes', () => {
  it('is never overwritten by a ship; once its run is brought back the next ship keeps everything', async () => {
    const local = await project('guarded')
    const { shipped } = await shipWorkspace(connection, local, { runId: 'run_first' })
    expect(shipped.runId).toBe('run_first')
    // The agent's work on the host, never brought back (the daemon died).
    await writeFile(path.join(shipped.remoteDir, 'agent-work.txt'), 'precious\n')
    await writeFile(path.join(shipped.remoteDir, 'README.md'), '# edited by the agent\n')

    const refused = shipWorkspace(connection, local, { runId: 'run_second', settled: async () => false })
    await expect(refused).rejects.toMatchObject({ code: 'conflict' })
    await expect(refused).rejects.toThrow(/hangar runs finalize run_first/)
    expect(await readFile(path.join(shipped.remoteDir, 'agent-work.txt'), 'utf8')).toBe('precious\n')
    expect(await readFile(path.join(shipped.remoteDir, 'README.md'), 'utf8')).toBe('# edited by the agent\n')

    // Without a way to ask whether that run was settled, a ship refuses too.
    await expect(shipWorkspace(connection, local, { runId: 'run_third' })).rejects.toMatchObject({
      code: 'conflict',
    })

    await syncBack(connection, shipped)
    expect(await readFile(path.join(local, 'agent-work.txt'), 'utf8')).toBe('precious\n')
    const next = await shipWorkspace(connection, local, { runId: 'run_second' })
    expect(await readFile(path.join(next.shipped.remoteDir, 'agent-work.txt'), 'utf8')).toBe('precious\n')
    expect(await readFile(path.join(next.shipped.remoteDir, 'README.md'), 'utf8')).toBe(
      '# edited by the agent\n',
    )
  })

  it('clears a mark left by a run whose changes are known to be back (a release that did not reach the host)', async () => {
    const local = await project('stale-mark')
    const { shipped } = await shipWorkspace(connection, local, { runId: 'run_done' })
    // As if its changes came back but the release was lost: the mark stays on the host.
    const mark = path.join(path.dirname(shipped.remoteDir), `${shipped.key}.unfinalized`)
    expect(await readFile(mark, 'utf8')).toBe('run_done\n')
    const asked: string[] = []
    const next = await shipWorkspace(connection, local, {
      runId: 'run_next',
      settled: async (runId) => {
        asked.push(runId)
        return true
      },
    })
    expect(asked).toEqual(['run_done'])
    expect(await readFile(mark, 'utf8')).toBe('run_next\n')
    await syncBack(connection, next.shipped)
    expect(existsSync(mark)).toBe(false)
  })
})
