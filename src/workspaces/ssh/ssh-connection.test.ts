// The shared master connection against a real OpenSSH server on loopback: a master applies its own options
// to every session it carries, so two ssh command lines must never share one.
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectToSshd, startSshd, type TestSshd } from '../../../test/helpers/sshd.js'
import type { SshConnection } from './ssh-connection.js'

let sshd: TestSshd
let scratch: string
const opened: SshConnection[] = []

function connect(sshCommand: string): SshConnection {
  const connection = connectToSshd(sshd, path.join(scratch, 'host'), sshCommand)
  opened.push(connection)
  return connection
}

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'hangar-ssh-master-'))
  sshd = await startSshd({ dir: path.join(scratch, 'sshd'), acceptEnv: ['HANGAR_BWRAP'] })
})

afterAll(async () => {
  await Promise.all(opened.map((connection) => connection.close()))
  await sshd?.stop()
  await rm(scratch, { recursive: true, force: true })
})

describe('ssh master connections', () => {
  it('are not shared between ssh command lines: a master left by one does not lend its SetEnv to another', async () => {
    const printEnv = 'printenv HANGAR_BWRAP || echo unset'
    // This one starts a master and leaves it up (as a daemon killed mid-run would, ControlPersist).
    const withEnv = connect(`${sshd.sshCommand} -o SetEnv=HANGAR_BWRAP=/nonexistent/bwrap`)
    expect((await withEnv.check('printenv', printEnv)).stdout.toString().trim()).toBe('/nonexistent/bwrap')
    const plain = connect(sshd.sshCommand)
    expect((await plain.check('printenv', printEnv)).stdout.toString().trim()).toBe('unset')
    // The same command line does reuse its own master, and keeps its own setting.
    const again = connect(`${sshd.sshCommand} -o SetEnv=HANGAR_BWRAP=/nonexistent/bwrap`)
    expect((await again.check('printenv', printEnv)).stdout.toString().trim()).toBe('/nonexistent/bwrap')
  })
})
