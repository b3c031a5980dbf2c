// The CLI proper: src/bin/hangar.ts imports this once it has checked the Node.js version.
import { runCli } from '../cli/program.js'

const handlers: ((signal: string) => void)[] = []
const reloadHandlers: (() => void)[] = []
process.on('SIGHUP', () => {
  // Only the daemon reloads on SIGHUP; anything else keeps the default meaning (the terminal went away).
  if (reloadHandlers.length === 0) process.exit(129)
  for (const handler of reloadHandlers) handler()
})
let signalled = 0
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    signalled++
    // A second Ctrl-C means "now": exit without waiting for a clean stop.
    if (signalled > 1 || handlers.length === 0) process.exit(signal === 'SIGINT' ? 130 : 143)
    for (const handler of handlers) handler(signal)
  })
}

const code = await runCli(
  process.argv.slice(2),
  {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
  },
  {
    onShutdown: (handler) => handlers.push(handler),
    onReload: (handler) => reloadHandlers.push(handler),
    // Started by `hangar up --detach`: one message to say it is ready, then the channel is let go.
    ...(process.send && {
      notifyParent: (message: unknown) => {
        process.send?.(message, undefined, {}, () => {
          if (process.connected) process.disconnect()
        })
      },
    }),
  },
)
process.exitCode = code
