// A real OpenSSH server on 127.0.0.1 for tests and the bench: fresh host and user keys in a temp dir, a
// private sshd_config, and an ssh_config that trusts exactly this server. Nothing leaves the machine.
// A missing /usr/sbin/sshd is a failure, never a skip: `.ci/run` installs Debian's openssh-server.
// Plain JS so node can import it from scripts/*.mjs; types in sshd-server.d.mts, tests use ./sshd.ts.
import { execFile, spawn } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

export const SSHD_PATH = '/usr/sbin/sshd'

// sshd answers a first `ssh … true` in about 0.1 s alone, but a loaded CI machine (Chromium and agent CLIs
// beside it on two cores) has taken over 5 s for one: a probe gets 15 s, the server 40 s in all.
const READY_TIMEOUT_MS = 40_000
const PROBE_TIMEOUT_MS = 15_000
const BIND_ATTEMPTS = 5

/**
 * Starts sshd on a free loopback port (see TestSshd in sshd-server.d.mts).
 * @param {{ dir?: string, acceptEnv?: string[] }} [options] `dir`: where keys and configs go (kept by stop());
 *   default a temp dir. `acceptEnv`: variables a client may set in its sessions (ssh -o SetEnv=…).
 * @returns {Promise<import('./sshd-server.mjs').TestSshd>}
 */
export async function startSshd(options = {}) {
  if (!existsSync(SSHD_PATH)) {
    throw new Error(`sshd not found at ${SSHD_PATH}: install Debian's openssh-server (bash .ci/run does)`)
  }
  const ownDir = options.dir === undefined
  const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), 'hangar-sshd-')))
  try {
    return await startIn(dir, ownDir, options.acceptEnv ?? [])
  } catch (error) {
    if (ownDir) await rm(dir, { recursive: true, force: true })
    throw error
  }
}

/**
 * @param {string} dir
 * @param {boolean} ownDir
 * @param {string[]} acceptEnv
 */
async function startIn(dir, ownDir, acceptEnv) {
  await mkdir(dir, { recursive: true })
  // sshd refuses to start without its privilege-separation directory.
  if (!existsSync('/run/sshd')) {
    await mkdir('/run/sshd', { recursive: true, mode: 0o755 })
    await chmod('/run/sshd', 0o755)
  }
  const user = os.userInfo().username
  const hostKey = path.join(dir, 'ssh_host_ed25519_key')
  const identityFile = path.join(dir, 'id_ed25519')
  await Promise.all([keygen(hostKey, 'hangar-test-host'), keygen(identityFile, 'hangar-test-user')])
  await chmod(identityFile, 0o600)
  await writeFile(path.join(dir, 'authorized_keys'), await readFile(`${identityFile}.pub`, 'utf8'), {
    mode: 0o600,
  })
  const hostPublicKey = (await readFile(`${hostKey}.pub`, 'utf8')).trim().split(/\s+/).slice(0, 2).join(' ')
  const configFile = path.join(dir, 'ssh_config')
  const knownHosts = path.join(dir, 'known_hosts')
  await writeFile(configFile, clientConfig(knownHosts))

  /** @type {string[]} */
  const errors = []
  for (let attempt = 1; attempt <= BIND_ATTEMPTS; attempt += 1) {
    const port = await freePort()
    await writeFile(knownHosts, `[127.0.0.1]:${port} ${hostPublicKey}\n`)
    const sshdConfig = path.join(dir, 'sshd_config')
    await writeFile(sshdConfig, serverConfig({ dir, port, hostKey, user, acceptEnv }))
    const child = spawn(SSHD_PATH, ['-D', '-e', '-f', sshdConfig], { stdio: ['ignore', 'ignore', 'pipe'] })
    // Best effort when a test process ends without stop(): at least the listener goes.
    const killOnExit = () => {
      if (child.pid !== undefined) signal(child.pid, 'SIGKILL')
    }
    process.once('exit', killOnExit)
    child.once('exit', () => process.off('exit', killOnExit))
    let stderr = ''
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (/** @type {string} */ chunk) => {
      stderr += chunk
    })
    child.on('error', (error) => {
      stderr += `${error.message}\n`
    })
    const probe = { configFile, port, identityFile, user }
    const notReady = await waitUntilReady(child, probe)
    if (notReady === null && child.pid !== undefined) {
      return makeHandle({ child, pid: child.pid, port, user, identityFile, configFile, dir, ownDir })
    }
    await killTree(child)
    errors.push(
      `attempt ${attempt} (port ${port}): ${notReady ?? 'no pid'}${stderr ? `; sshd stderr: ${stderr.trim()}` : ''}`,
    )
    // Only a lost race for the port is worth another try.
    if (!/bind|address already in use/i.test(stderr)) break
  }
  throw new Error(`test sshd did not start (${SSHD_PATH} -D -e -f ${dir}/sshd_config):\n${errors.join('\n')}`)
}

/**
 * @param {{ child: import('node:child_process').ChildProcess, pid: number, port: number, user: string,
 *   identityFile: string, configFile: string, dir: string, ownDir: boolean }} state
 * @returns {import('./sshd-server.mjs').TestSshd}
 */
function makeHandle(state) {
  /** @type {Promise<void> | undefined} */
  let stopping
  return {
    host: '127.0.0.1',
    port: state.port,
    user: state.user,
    identityFile: state.identityFile,
    configFile: state.configFile,
    sshCommand: `ssh -F ${state.configFile}`,
    pid: state.pid,
    stop() {
      stopping ??= (async () => {
        await killTree(state.child)
        if (state.ownDir) await rm(state.dir, { recursive: true, force: true })
      })()
      return stopping
    },
  }
}

/** @param {string} knownHosts */
function clientConfig(knownHosts) {
  return [
    'Host *',
    `  UserKnownHostsFile ${knownHosts}`,
    '  GlobalKnownHostsFile /dev/null',
    '  StrictHostKeyChecking yes',
    '  UpdateHostKeys no',
    '  BatchMode yes',
    '  IdentitiesOnly yes',
    '  PasswordAuthentication no',
    '  KbdInteractiveAuthentication no',
    '  ConnectTimeout 5',
    '  LogLevel ERROR',
    '',
  ].join('\n')
}

/** @param {{ dir: string, port: number, hostKey: string, user: string, acceptEnv: string[] }} options */
function serverConfig(options) {
  // Without acceptEnv, AcceptEnv is left unset: sshd then accepts no client environment.
  return [
    ...(options.acceptEnv.length > 0 ? [`AcceptEnv ${options.acceptEnv.join(' ')}`] : []),
    'ListenAddress 127.0.0.1',
    `Port ${options.port}`,
    `HostKey ${options.hostKey}`,
    `PidFile ${path.join(options.dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${path.join(options.dir, 'authorized_keys')}`,
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'UsePAM no',
    'StrictModes no',
    'PermitRootLogin prohibit-password',
    `AllowUsers ${options.user}`,
    'MaxSessions 50',
    'MaxStartups 50:30:100',
    'LogLevel ERROR',
    'Subsystem sftp internal-sftp',
    'PrintMotd no',
    '',
  ].join('\n')
}

/**
 * @param {string} file
 * @param {string} comment
 * @returns {Promise<void>}
 */
async function keygen(file, comment) {
  // A reused options.dir may hold keys from before, and ssh-keygen would ask before overwriting them.
  await Promise.all([rm(file, { force: true }), rm(`${file}.pub`, { force: true })])
  return new Promise((resolve, reject) => {
    execFile(
      'ssh-keygen',
      ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file],
      (error, _stdout, stderr) =>
        error ? reject(new Error(`ssh-keygen failed for ${file}: ${stderr || error.message}`)) : resolve(),
    )
  })
}

/** @returns {Promise<number>} */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/**
 * null once `ssh … true` succeeds, else why sshd never became ready.
 * @param {import('node:child_process').ChildProcess} child
 * @param {{ configFile: string, port: number, identityFile: string, user: string }} probe
 * @returns {Promise<string | null>}
 */
async function waitUntilReady(child, probe) {
  const deadline = Date.now() + READY_TIMEOUT_MS
  /** @type {string | undefined} */
  let exited
  const onExit = (/** @type {number | null} */ code, /** @type {NodeJS.Signals | null} */ signal) => {
    exited = `sshd exited (${signal ?? `code ${code}`})`
  }
  const onError = (/** @type {Error} */ error) => {
    exited = `sshd did not run (${error.message})`
  }
  child.once('exit', onExit)
  child.once('error', onError)
  let lastError = 'not tried'
  try {
    while (Date.now() < deadline) {
      if (exited) return exited
      const result = await sshTrue(probe)
      if (result === null) return null
      lastError = result
      if (exited) return exited
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return `no successful \`ssh … true\` within ${READY_TIMEOUT_MS} ms (last: ${lastError})`
  } finally {
    child.off('exit', onExit)
    child.off('error', onError)
  }
}

/**
 * null when `ssh … true` succeeded, else why not.
 * @param {{ configFile: string, port: number, identityFile: string, user: string }} probe
 * @returns {Promise<string | null>}
 */
function sshTrue(probe) {
  const args = ['-F', probe.configFile, '-p', String(probe.port), '-i', probe.identityFile]
  return new Promise((resolve) => {
    execFile(
      'ssh',
      [...args, `${probe.user}@127.0.0.1`, 'true'],
      { timeout: PROBE_TIMEOUT_MS },
      (error, _stdout, stderr) => {
        if (!error) return resolve(null)
        if (error.killed) return resolve(`no answer within ${PROBE_TIMEOUT_MS} ms`)
        resolve((stderr.trim() || error.message.trim()).split('\n').slice(-1)[0] ?? error.message)
      },
    )
  })
}

/**
 * Every live descendant of pid, found through /proc (sshd's session children call setsid).
 * @param {number} pid
 * @returns {Promise<number[]>}
 */
async function descendants(pid) {
  /** @type {Map<number, number[]>} */
  const parents = new Map()
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    let stat
    try {
      stat = await readFile(`/proc/${entry}/stat`, 'utf8')
    } catch {
      continue // gone meanwhile
    }
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so parse after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
    const children = parents.get(ppid) ?? []
    children.push(Number(entry))
    parents.set(ppid, children)
  }
  /** @type {number[]} */
  const found = []
  const queue = [pid]
  while (queue.length > 0) {
    for (const child of parents.get(/** @type {number} */ (queue.shift())) ?? []) {
      found.push(child)
      queue.push(child)
    }
  }
  return found
}

/**
 * @param {number} pid
 * @param {NodeJS.Signals} name
 */
function signal(pid, name) {
  try {
    process.kill(pid, name)
  } catch {
    // already gone
  }
}

/** How long the sessions of a stopping sshd get to run their exit handlers before SIGKILL. */
const TERM_GRACE_MS = 3_000

/**
 * Kills sshd and all its descendants. The tree is frozen first (SIGSTOP, repeated until no new process
 * shows up) so nothing forks while it is collected. Then its sessions get SIGTERM (and SIGCONT to act on
 * it), and SIGKILL only if they are still there after a grace period: a shell killed outright skips its
 * exit traps, and one that was in the login user's rc files can leave a lock behind for good (pyenv's
 * rehash, in root's .bashrc on these machines, then makes every later SSH session wait 60 s for it).
 * @param {import('node:child_process').ChildProcess} child
 * @returns {Promise<void>}
 */
async function killTree(child) {
  const pid = child.pid
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  /** @type {Promise<void>} */
  const exited = new Promise((resolve) => child.once('exit', () => resolve()))
  signal(pid, 'SIGSTOP')
  /** @type {number[]} */
  let tree = []
  for (;;) {
    const found = await descendants(pid)
    for (const member of found) signal(member, 'SIGSTOP')
    if (found.length === tree.length && found.every((member) => tree.includes(member))) break
    tree = found
  }
  for (const member of tree) signal(member, 'SIGTERM')
  for (const member of tree) signal(member, 'SIGCONT')
  const deadline = Date.now() + TERM_GRACE_MS
  while (tree.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  for (const member of tree) signal(member, 'SIGKILL')
  signal(pid, 'SIGKILL')
  await exited
}

/**
 * A process that has not ended (a zombie has: it only waits for its parent to collect it).
 * @param {number} pid
 */
function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}
