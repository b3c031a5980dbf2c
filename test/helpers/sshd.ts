// A real OpenSSH server on 127.0.0.1 for tests. The implementation is plain JS (sshd-server.mjs) so
// scripts/bench.mjs can start one too; this keeps the import path the tests use.
export { startSshd, SSHD_PATH } from './sshd-server.mjs'
export type { TestSshd } from './sshd-server.mjs'
import { createSshConnection, type SshConnection } from '../../src/workspaces/ssh/ssh-connection.js'

/** A connection to the test server as target `box`, its Hangar directory at `dir`, through `sshCommand`. */
export function connectToSshd(
  sshd: { user: string; port: number; identityFile: string },
  dir: string,
  sshCommand: string,
): SshConnection {
  return createSshConnection(
    { name: 'box', ssh: `${sshd.user}@127.0.0.1`, dir, port: sshd.port, identityFile: sshd.identityFile },
    { HANGAR_SSH_COMMAND: sshCommand },
  )
}

/** A `targets:` entry of hangar.yaml for the test server, its Hangar directory on the host at `dir`. */
export function sshTargetYaml(
  sshd: { user: string; port: number; identityFile: string },
  name: string,
  dir: string,
): string {
  return `  ${name}: { ssh: "${sshd.user}@127.0.0.1", dir: "${dir}", port: ${sshd.port}, identityFile: "${sshd.identityFile}" }`
}
