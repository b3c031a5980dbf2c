// `hangar notify` against a real daemon: add a Slack-shaped webhook (its secret printed once), list it,
// test it (delivered, signed), read its log, see a failing target's error, remove it; mistakes are one line.
import { execFileSync } from 'node:child_process'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { cleanEnv, type RunningDaemon, runHangar, startDaemon } from '../helpers/hangar-cli.js'
import { startWebhookReceiver } from '../helpers/notification-receivers.js'
import { makeTempDir } from '../helpers/store-engines.js'

describe('hangar notify', () => {
  let root: string
  let project: string
  let env: NodeJS.ProcessEnv
  let daemon: RunningDaemon
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>

  beforeAll(async () => {
    receiver = await startWebhookReceiver()
    root = await makeTempDir('hangar-notify-cli-')
    project = path.join(root, 'project')
    await mkdir(project)
    execFileSync('git', ['init', '-q'], { cwd: project })
    // The receivers are on loopback: the operator allows it.
    await writeFile(path.join(project, 'hangar.yaml'), 'notifications:\n  allowPrivateNetworks: true\n')
    env = cleanEnv({
      PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      HOME: root,
      HANGAR_DATA_DIR: path.join(root, 'data'),
    })
    daemon = await startDaemon([], { env, cwd: project })
  })

  afterAll(async () => {
    await daemon?.stop()
    await receiver?.close()
    if (root) await rm(root, { recursive: true, force: true })
  })

  const hangar = (args: string[]) => runHangar(args, { env, cwd: project, timeoutMs: 60_000 })

  it('adds, lists, tests, logs and removes a webhook channel', async () => {
    const added = await hangar([
      'notify',
      'add',
      'webhook',
      `${receiver.url}/slack`,
      '--format',
      'slack',
      '--name',
      'team',
    ])
    expect(added.code, added.stderr).toBe(0)
    const secret = /^(hns_\S+)$/m.exec(added.stdout)?.[1]
    expect(secret).toBeDefined()
    receiver.setSecret(secret!)
    const id = /as (nch_\w+)/.exec(added.stdout)![1]!

    const listed = await hangar(['notify', 'list'])
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+team\\s+slack\\s+approval\\.requested,`, 'm'))
    expect(listed.stdout).not.toContain(secret!)

    const tested = await hangar(['notify', 'test', 'team'])
    expect(tested.code, tested.stderr).toBe(0)
    expect(tested.stdout).toMatch(/^Test ndl_\w+: delivered \(HTTP 200\)$/m)
    const [arrived] = await receiver.waitFor(1)
    expect((arrived!.json as { text: string }).text).toContain('Hangar test notification')

    const log = await hangar(['notify', 'log', id, '--json'])
    expect(JSON.parse(log.stdout)).toMatchObject([
      { event: 'notification.test', status: 'delivered', attempts: 1 },
    ])

    const removed = await hangar(['notify', 'remove', id])
    expect(removed.stdout).toBe(`Removed channel ${id}\n`)
    expect((await hangar(['notify', 'list', '--json'])).stdout.trim()).toBe('[]')
  })

  it('shows a failing target in the test outcome and the log', async () => {
    const added = await hangar(['notify', 'add', 'webhook', 'http://127.0.0.1:9/down', '--json'])
    const { id } = JSON.parse(added.stdout) as { id: string }
    const tested = await hangar(['notify', 'test', id])
    expect(tested.stdout).toMatch(/^Test ndl_\w+: pending after 1 attempt\(s\): .+/m)
    const log = await hangar(['notify', 'log', id])
    // The worker may have tried again by now (the first retry is due after 1–2 s): one attempt or more.
    expect(log.stdout).toMatch(/notification\.test\s+pending\s+[1-9]\d*\s+.*ECONNREFUSED/)
    await hangar(['notify', 'remove', id])
  })

  it('says what is wrong in one line', async () => {
    const wrongType = await hangar(['notify', 'add', 'sms', 'http://x'])
    expect(wrongType.code).toBe(2)
    expect(wrongType.stderr).toMatch(/^hangar: error: cannot add a sms channel here; .+Web Push/m)
    const unknown = await hangar(['notify', 'test', 'nope'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^hangar: error: no notification channel nope; /m)
    const badEvent = await hangar([
      'notify',
      'add',
      'webhook',
      'https://example.com',
      '--events',
      'run.exploded',
    ])
    expect(badEvent.code).toBe(2)
    expect(badEvent.stderr).toMatch(/unknown event run\.exploded; one of approval\.requested/)
  })
})
