// A CLI run's sandbox, opened just before its agent starts: bubblewrap around the process (local runs), or
// the reason it runs without one. A profile that asks for `sandbox: workspace` where that cannot be had
// (bubblewrap missing, user namespaces refused) fails the run with a fix-it line: never a silent
// unsandboxed run. An SSH target runs unsandboxed for now and its run says so.
import type { RunSandbox } from '../core/events.js'
import { AppError, describeError } from '../core/errors.js'
import type { Logger } from '../core/logger.js'
import { openRunSandbox, type RunSandboxHandle, type SandboxSettings } from '../sandbox/run-sandbox.js'
import { keptSandboxHome } from '../sandbox/sandbox-home.js'
import type { CliRunRequest } from './execute-cli-run.js'
import type { CliModelRoute } from './model-proxy.js'
import type { ActiveRun, RunEnd } from './run-service.js'

export interface CliSandboxRequest {
  settings: SandboxSettings
  dataDir: string
  log: Logger
}

export type OpenedCliSandbox =
  { handle: RunSandboxHandle | undefined; record: RunSandbox | undefined } | { failed: RunEnd }

export async function openCliSandbox(
  active: ActiveRun,
  request: CliRunRequest,
  context: { runDir: string; route: CliModelRoute; remote: boolean },
): Promise<OpenedCliSandbox> {
  const wanted = request.sandbox
  if (!wanted) return { handle: undefined, record: undefined }
  if (wanted.settings.mode === 'off')
    return { handle: undefined, record: { mode: 'off', reason: 'the profile sets sandbox: off' } }
  if (context.remote)
    return {
      handle: undefined,
      record: { mode: 'off', reason: 'runs on an SSH target are not sandboxed yet' },
    }
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
        proxyOrigin:
          context.route.proxied && context.route.endpoint
            ? new URL(context.route.endpoint.baseUrl).origin
            : undefined,
        log: wanted.log,
      },
    )
    return { handle, record: handle.record }
  } catch (error) {
    return fail(error)
  }
}
