// The first process inside a sandbox: it listens on 127.0.0.1:<port> of the sandbox's own network namespace
// (where nothing else exists) for each route, relays every connection to the daemon's Unix socket bound
// into the sandbox, and only then starts the agent, so the agent's first model request always finds it.
// It is written into the run's directory as plain JavaScript and run by the daemon's own node, so it needs
// no build step and nothing from the user's home.

export const FORWARDER_FILE = 'hangar-forwarder.mjs'

/**
 * What the forwarder sets for itself, and so for the agent it starts, before starting it: bubblewrap's
 * --new-session puts the sandbox in a session (and so a scheduling autogroup) of its own, out of reach of
 * the priority the daemon gives the processes it spawns (src/adapters/agent-priority.ts).
 */
export interface ForwarderPriority {
  niceness: number
  groupNiceness: number
}

export interface ForwarderRoute {
  port: number
  socket: string
}

export const FORWARDER_SCRIPT = `// Hangar sandbox forwarder (written per run; see src/sandbox/forwarder-script.ts).
import net from 'node:net'
import os from 'node:os'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'

const routes = JSON.parse(process.argv[2])
const separator = process.argv.indexOf('--', 3)
const command = process.argv.slice(separator + 1)
const [priority] = process.argv.slice(3, separator)

// Nicer only, never less nice: best effort (no autogroups, or not allowed), as outside the sandbox.
if (priority) {
  const { niceness, groupNiceness } = JSON.parse(priority)
  try {
    os.setPriority(Math.max(os.getPriority(), niceness))
  } catch {}
  try {
    writeFileSync('/proc/self/autogroup', String(groupNiceness))
  } catch {}
}

function relay(client, socket) {
  const upstream = net.connect(socket)
  client.pipe(upstream)
  upstream.pipe(client)
  client.on('error', () => upstream.destroy())
  upstream.on('error', () => client.destroy())
  client.on('close', () => upstream.destroy())
  upstream.on('close', () => client.destroy())
}

try {
  await Promise.all(
    routes.map(
      (route) =>
        new Promise((resolve, reject) => {
          const server = net.createServer((client) => relay(client, route.socket))
          server.on('error', reject)
          server.listen(route.port, '127.0.0.1', resolve)
        }),
    ),
  )
} catch (error) {
  process.stderr.write('hangar sandbox: cannot listen for the model proxy: ' + error.message + '\\n')
  process.exit(126)
}

const child = spawn(command[0], command.slice(1), { stdio: 'inherit' })
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal))
child.on('error', (error) => {
  process.stderr.write('hangar sandbox: cannot start ' + command[0] + ': ' + (error.code ?? error.message) + '\\n')
  process.exit(127)
})
child.on('exit', (code, signal) => {
  process.exit(code ?? 128 + (signal ? os.constants.signals[signal] : 0))
})
`
