// A CLI run's sandbox, opened just before its agent starts: bubblewrap around the process (locally or on
// an SSH target's host), or the reason it runs without one. Locally, a profile that asks for `sandbox:
// workspace` where that cannot be had (bubblewrap missing, user namespaces refused) fails the run with a
// fix-it line: never a silent unsandboxed run. On a host that cannot confine it the run goes ahead
// unsandboxed, and says so: in run-start and in a warning right after it.
import type { ErrorEvent, RunSandbox } from '../core/events.js'
import { AppError, describeError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { openRemoteSandbox } from '../sandbox/remote-sandbox.js'
import { openRunSandbox, type RunSandboxHandle, type SandboxSettings } from '../sandbox/run-sandbox.js'
import { keptSandboxHome } from '../sandbox/sandbox-home.js'
import type { ShippedWorkspace } from '../workspaces/ssh/workspace-sync.js'
import type { CliRunRequest } from './execute-cli-run.js'
import type { CliModelRoute } from './model-proxy.js'
import type { ProxyForward, RemoteLaunch } from './remote-launch.js'
import type { ActiveRun, RunEnd } from './run-service.js'

export interface CliSandboxRequest {
  settings: SandboxSettings
  dataDir: string
  log: Logger
}

export type OpenedCliSandbox =
  | {
      handle: RunSandboxHandle | undefined
      record: RunSandbox | undefined
      /** On a host: the sandbox's forwards to the proxy (instead of the TCP tunnel). */
      forward?: ProxyForward
      /** Shown right after run-start: why a run on a host is not sandboxed. */
      warning?: ErrorEvent
    }
  | { failed: RunEnd }

export async function openCliSandbox(
  active: ActiveRun,
  request: CliRunRequest,
  context: {
    runDir: string
    route: CliModelRoute
    remote: { launch: RemoteLaunch; shipped: ShippedWorkspace } | undefined
  },
): Promise<OpenedCliSandbox> {
  const wanted = request.sandbox
  if (!wanted) return { handle: undefined, record: undefined }
  if (wanted.settings.mode === 'off')
    return { handle: undefined, record: { mode: 'off', reason: 'the profile sets sandbox: off' } }
  const fail = (error: unknown): { failed: RunEnd } => {
    const appError =
      error instanceof AppError ? error : new AppError('sandbox_unavailable', (error as Error).message)
    const message = describeError(appError)
    active.emit({ type: 'error', code: 'sandbox_unavailable', message, retryable: false })
    return { failed: { status: 'failed', reason: message } }
  }
  if (!context.route.proxied && wanted.settings.hosts.length === 0)
    return fail(
      new AppError(
        'sandbox_unavailable',
        'a sandboxed run reaches only the model proxy, and this run is not proxied',
        {
          hint: "give the profile a key or endpoint Hangar can proxy, list the provider's host in sandboxHosts, or set sandbox: off",
        },
      ),
    )
  const proxyOrigin =
    context.route.proxied && context.route.endpoint
      ? new URL(context.route.endpoint.baseUrl).origin
      : undefined
  if (context.remote && request.target) {
    try {
      const opened = await openRemoteSandbox(request.target, wanted.settings, {
        runId: active.run.id,
        agent: request.agent,
        adapterId: request.adapter.id,
        executable: request.executable,
        remoteRoot: context.remote.shipped.remoteRoot,
        cwd: context.remote.launch.cwd,
        runDir: context.remote.launch.runDir,
        useLogin: !(request.isolateHome ?? false),
        proxyOrigin,
        log: wanted.log,
      })
      if ('unsandboxed' in opened) {
        const { reason } = opened.unsandboxed
        const warning: ErrorEvent = {
          type: 'error',
          code: 'sandbox_off_on_host',
          message: reason,
          retryable: false,
        }
        return { handle: undefined, record: opened.unsandboxed, warning }
      }
      return { handle: opened.handle, record: opened.handle.record, forward: opened.handle.forward }
    } catch (error) {
      return fail(error)
    }
  }
  try {
    const handle = await openRunSandbox(
      { dataDir: wanted.dataDir, env: request.env, settings: wanted.settings },
      {
        runId: active.run.id,
        runDir: context.runDir,
        // Kept per agent and workspace: the CLI's own sessions (resume, a conversation's next turn) live there.
        home: await keptSandboxHome(wanted.dataDir, request.agent, request.cwd),
        cwd: request.cwd,
        adapterId: request.adapter.id,
        executable: request.executable,
        useLogin: !(request.isolateHome ?? false),
        proxyOrigin,
        log: wanted.log,
      },
    )
    return { handle, record: handle.record }
  } catch (error) {
    return fail(error)
  }
}
