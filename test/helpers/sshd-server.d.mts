// Types for sshd-server.mjs (plain JS so scripts/bench.mjs can import it too).

export declare const SSHD_PATH: '/usr/sbin/sshd'

export interface TestSshd {
  host: '127.0.0.1'
  port: number
  /** os.userInfo().username: the account the key logs in as */
  user: string
  /** Private key (ed25519, no passphrase, mode 0600) authorised for `user`. */
  identityFile: string
  /**
   * An ssh_config for `ssh -F`: `Host *` with UserKnownHostsFile (this server's host key for
   * [127.0.0.1]:port), StrictHostKeyChecking yes, BatchMode yes, IdentitiesOnly yes, LogLevel ERROR.
   * No HostName/Port/User/IdentityFile and no ControlMaster/ControlPath: callers pass -p, -i, user@host.
   */
  configFile: string
  /** `ssh -F <configFile>`, the value for the HANGAR_SSH_COMMAND env var. */
  sshCommand: string
  /** The listening sshd. */
  pid: number
  /** Kills sshd and every session process it spawned; removes the dir unless it was given. Idempotent. */
  stop(): Promise<void>
}

/**
 * Starts a loopback sshd (fresh keys, a private config) as the current user. `dir`: where keys and
 * configs go, kept by stop(); default a temp dir that stop() removes. `acceptEnv`: variables a client may
 * set in its sessions (`ssh -o SetEnv=NAME=value`). Throws when sshd is missing.
 */
export declare function startSshd(options?: { dir?: string; acceptEnv?: string[] }): Promise<TestSshd>
