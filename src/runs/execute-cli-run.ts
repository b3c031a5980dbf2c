// Executes one run of an agent CLI: skills placed, launch plan built, process supervised, every stdout
// line parsed into events, and the final status decided from what the CLI said — not from its exit code
// (Gemini exits 0 on SIGTERM; Copilot prints a result after an abort).
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { AgentEvent, HandoffEvent, UsageTotals } from '../core/events.js'
import { errorEvent } from '../adapters/parsers/agent-error-codes.js'
import type { PlacedSkills, Skill } from '../adapters/skills.js'
import { placeSkills } from '../adapters/skills.js'
import { placementRecordFile } from '../adapters/skill-placements.js'
import { type ProcessExit, reapProcessGroup, type Supervisor } from '../adapters/supervisor.js'
import { runUsage } from '../core/usage-cost.js'
import { AppError } from '../core/errors.js'
import type { PermissionsConfig } from '../core/permissions.js'
import type {
  AdapterDef,
  LaunchInput,
  ModelEndpoint,
  ParserOutcome,
  ResolvedExecutable,
} from '../adapters/types.js'
import { shipWorkspace, syncBack, type ShippedWorkspace } from '../workspaces/ssh/workspace-sync.js'
import { currentBranch } from '../workspaces/git.js'
import { startRunChanges } from '../workspaces/run-changes.js'
import type { SshConnection } from '../workspaces/ssh/ssh-connection.js'
import type { CliModelRoute, CliRouteHooks } from './model-proxy.js'
import { createRemoteLaunch, type RemoteLaunch } from './remote-launch.js'
import { createStderrEvents } from './stderr-events.js'
import type { ActiveRun, RunEnd } from './run-service.js'
import { openCliSandbox, type CliSandboxRequest } from './cli-sandbox.js'
import { createSessionRecorder } from './session-recorder.js'
import type { SetupStep } from './workspace-setup.js'

export interface CliRunRequest {
  agent: string
  adapter: AdapterDef
  executable: ResolvedExecutable
  prompt: string
  cwd: string
  model?: string | undefined
  endpoint?: ModelEndpoint | undefined
  resumeSessionId?: string | undefined
  /** What the prompt was handed of its conversation (handoff.ts): recorded right after `run-start`. */
  handoff?: HandoffEvent | undefined
  extraArgs?: readonly string[]
  /** The profile's `permissions`; absent = the default mode. */
  permissions?: PermissionsConfig | undefined
  skills?: readonly Skill[]
  /** Give the CLI a fresh HOME instead of the user's (tests, or a profile that asks for it). */
  isolateHome?: boolean
  /** The base environment; Hangar's own secrets are removed before the CLI sees it. */
  env: Readonly<Record<string, string | undefined>>
  timeoutSeconds?: number
  /** An SSH target: the workspace is shipped there, the CLI runs there, the changes come back. */
  target?: SshConnection | undefined
  /** The model route (the proxy's); without it the CLI gets `endpoint` directly. */
  route?: CliRouteHooks | undefined
  /**
   * The workspace lifecycle's setup, before the agent starts (locally first thing; on a target after the
   * ship): a failed end it returns ends the run.
   */
  beforeAgent?: SetupStep | undefined
  /** The profile's sandbox (src/sandbox/); absent = not sandboxed, and run-start says nothing of it. */
  sandbox?: CliSandboxRequest | undefined
}

/** Variables of Hangar itself that an agent process must never inherit. */
const HANGAR_PRIVATE_ENV = ['HANGAR_SECRET_KEYS', 'HANGAR_DATABASE_URL', 'HANGAR_TEST_DATABASE_URL']

function agentEnvironment(
  env: Readonly<Record<string, string | undefined>>,
  hidden: readonly string[],
): Record<string, string | undefined> {
  const copy: Record<string, string | undefined> = { ...env }
  for (const name of HANGAR_PRIVATE_ENV) delete copy[name]
  for (const name of hidden) delete copy[name]
  return copy
}

function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join('\n')
}

export interface ExecuteOptions {
  supervisor: Supervisor
  signal?: AbortSignal
  /**
   * Where per-run directories go (settings files, TMPDIR). Private to this user: Gemini ignores a settings
   * file with a group- or world-writable folder above it, so not under /tmp. Usually `<data-dir>/runs`.
   */
  runFilesRoot: string
}

export async function executeCliRun(
  active: ActiveRun,
  request: CliRunRequest,
  options: ExecuteOptions,
): Promise<RunEnd> {
  const { adapter } = request
  await mkdir(options.runFilesRoot, { recursive: true, mode: 0o700 })
  const runDir = await mkdtemp(path.join(options.runFilesRoot, `${active.run.id}-`))
  let skills: PlacedSkills | undefined
  let routeClosed = false
  let closeSandbox: (() => Promise<void>) | undefined
  try {
    if (!request.target) {
      // Before anything of the run is in the workspace: what setup makes is not the agent's change.
      const failedSetup = await request.beforeAgent?.({ target: 'local', dir: request.cwd })
      if (failedSetup) {
        routeClosed = true
        return failedSetup
      }
    }
    // The workspace as it was before the agent: what changes after it and goes unreported is synthesised.
    const runChanges = await startRunChanges(request.cwd)
    skills = await placeSkills(
      request.skills ?? [],
      adapter.skills,
      request.cwd,
      request.prompt,
      active.run.id,
      // Recorded so that a daemon that dies mid-run removes them at its next start.
      placementRecordFile(options.runFilesRoot, active.run.id),
    )
    const route: CliModelRoute = request.route
      ? await request.route.open(active.run.id)
      : { endpoint: request.endpoint, proxied: false, hideEnv: [] }
    const env = agentEnvironment(request.env, route.hideEnv)
    let remote: { launch: RemoteLaunch; shipped: ShippedWorkspace } | undefined
    if (request.target) {
      let shipped: ShippedWorkspace
      try {
        ;({ shipped } = await shipWorkspace(request.target, request.cwd, {
          placed: skills.placed,
          branch: (await currentBranch(request.cwd).catch(() => null)) ?? undefined,
          runId: active.run.id,
          settled: (runId) => active.hostCopySettled(runId),
        }))
      } catch (error) {
        // Nothing ran and nothing local changed: the run fails with the reason (`hangar run` included).
        const message = `cannot ship the workspace: ${(error as Error).message}`
        active.emit({ type: 'error', code: 'workspace_ship_failed', message, retryable: true })
        return { status: 'failed', reason: message }
      }
      // Before the agent starts: a run whose process dies from here on is still brought back.
      await active.recordShipped(shipped)
      const failedSetup = await request.beforeAgent?.({
        target: request.target.target.name,
        connection: request.target,
        dir: shipped.remoteDir,
        localDir: request.cwd,
      })
      // The host copy was marked as this run's: released by the sync-back.
      if (failedSetup) return await finalizeRemote(active, request.target, shipped, failedSetup)
      const launch = createRemoteLaunch(request.target, shipped, active.run.id, {
        isolateHome: request.isolateHome ?? false,
      })
      remote = { launch, shipped }
    }
    const sandbox = await openCliSandbox(active, request, { runDir, route, remote })
    if ('failed' in sandbox) return sandbox.failed
    closeSandbox = sandbox.handle?.close
    const home =
      sandbox.handle?.home ??
      remote?.launch.home ??
      (request.isolateHome ? path.join(runDir, 'home') : (env.HOME ?? os.homedir()))
    const cwd = remote?.launch.cwd ?? request.cwd
    const endpoint = sandbox.handle ? sandbox.handle.endpoint(route.endpoint) : route.endpoint
    const agentEnv = sandbox.handle ? sandbox.handle.environment(env) : env
    const input: LaunchInput = {
      prompt: skills.prompt,
      cwd,
      model: request.model ?? route.endpoint?.model,
      endpoint,
      resumeSessionId: request.resumeSessionId,
      runDir: remote?.launch.runDir ?? runDir,
      home,
      isolatedHome: request.isolateHome ?? false,
      env: { ...agentEnv, HOME: home },
      permissions: request.permissions,
      extraArgs: request.extraArgs ?? [],
      executable: request.executable,
      timeoutSeconds: request.timeoutSeconds ?? 3600,
    }
    await active.begin({
      type: 'run-start',
      agent: request.agent,
      adapter: adapter.id,
      ...(input.model && { model: input.model }),
      cwd: remote?.launch.display ?? request.cwd,
      proxied: route.proxied,
      ...(sandbox.record && { sandbox: sandbox.record }),
      ...(skills.strategy !== 'none' && {
        skills: { strategy: skills.strategy, names: (request.skills ?? []).map((skill) => skill.name) },
      }),
    })
    if (sandbox.warning) active.emit(sandbox.warning)
    if (request.handoff) active.emit(request.handoff)
    if (route.feedsNotDelivered) active.emit(route.feedsNotDelivered)
    const localPlan = adapter.buildLaunch(input)
    const forward = sandbox.forward ?? (remote && route.proxyOrigin ? { from: route.proxyOrigin } : undefined)
    const wrapped = sandbox.handle?.wrap(localPlan) ?? localPlan
    const plan = remote ? await remote.launch.prepare(wrapped, env, forward) : wrapped
    const parser = adapter.createParser({ cwd, sessionId: localPlan.sessionId })
    // The session id is stored as soon as it is known (a chosen one: now), so an interrupted run can resume.
    const session = createSessionRecorder(active, parser)
    session.check()
    // Lines the parser did not know stay `raw`; the first one also raises one visible warning per run.
    let unrecognized = false
    const emitParsed = (event: AgentEvent) => {
      active.emit(event)
      runChanges.note(event)
      if (event.type !== 'raw' || event.stream !== 'stdout' || unrecognized) return
      unrecognized = true
      const message = `output format not recognised; tested with ${adapter.displayName} ${adapter.testedVersions}`
      active.emit(errorEvent('output_unrecognized', message, false))
    }

    const stderrEvents = createStderrEvents((event) => active.emit(event))
    let processHandle
    try {
      processHandle = await options.supervisor.start(plan, request.cwd, {
        onLine: (line) => {
          for (const event of parser.line(line)) emitParsed(event)
          session.check()
        },
        onStderr: (text) => stderrEvents.chunk(text),
      })
    } catch (error) {
      const message = `cannot start ${adapter.displayName}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`
      active.emit({ type: 'error', code: 'spawn_failed', message, retryable: false })
      const failed: RunEnd = { status: 'failed', reason: message }
      // The host copy was marked as this run's: released by the (empty) sync-back.
      return remote ? await finalizeRemote(active, request.target!, remote.shipped, failed) : failed
    }
    await active.setProcess(processHandle.pid)

    const graceMs = (adapter.cancelGraceSeconds ?? 3) * 1000
    // On a host, the CLI's group there is signalled first; the local ssh then ends with it.
    const onAbort = () =>
      void (remote ? remote.launch.cancel(graceMs).catch(() => {}) : Promise.resolve()).then(() =>
        processHandle.cancel(graceMs),
      )
    if (options.signal?.aborted) onAbort()
    options.signal?.addEventListener('abort', onAbort, { once: true })
    const exit = await processHandle.exited
    options.signal?.removeEventListener('abort', onAbort)
    // Helpers the CLI left in its group (a relaunched worker, a detached child) go with it.
    await reapProcessGroup(processHandle.pgid, 1000)

    const { events, outcome } = parser.finish()
    for (const event of events) emitParsed(event)
    stderrEvents.finish()
    await session.settled()
    // On a host the remote group is signalled first, so the local ssh may exit on its own before our
    // cancel() marks the exit: the abort is what says the user cancelled.
    const cancelled = exit.cancelled || options.signal?.aborted === true
    const agentEnd = decideEnd(active, adapter, outcome, { ...exit, cancelled }, processHandle.stderrTail())
    // A proxied run's totals are what the proxy metered, not what the CLI says of itself; the CLI's own
    // cost stands in when the proxy could not price a request (a model missing from the price table).
    const metered = await request.route?.close(active.run.id)
    routeClosed = true
    const usage = runUsage(metered, agentEnd.usage)
    if (usage) agentEnd.usage = usage
    if (!remote) {
      await runChanges.report((event) => active.emit(event))
      return agentEnd
    }
    await remote.launch.cleanup().catch(() => {})
    const end = await finalizeRemote(active, request.target!, remote.shipped, agentEnd)
    // The host's changes are compared once they are back here.
    if (end.workspace?.finalize === 'ok') await runChanges.report((event) => active.emit(event))
    return end
  } finally {
    // Revokes the run's proxy token on the ways out that did not get to close it above.
    if (!routeClosed) await request.route?.close(active.run.id).catch(() => {})
    await closeSandbox?.().catch(() => {})
    await skills?.cleanup().catch(() => {})
    await rm(runDir, { recursive: true, force: true }).catch(() => {})
  }
}

/** The run's status from what the CLI said (its final event), then from how it exited. */
function decideEnd(
  active: ActiveRun,
  adapter: AdapterDef,
  outcome: ParserOutcome,
  exit: ProcessExit,
  stderrTail: string,
): RunEnd {
  const usage: UsageTotals | undefined = outcome.usage
  const ending = { ...(outcome.sessionId && { sessionId: outcome.sessionId }), ...(usage && { usage }) }
  if (exit.cancelled) return { status: 'cancelled', reason: 'cancelled by the user', ...ending }
  if (outcome.failure) return { status: 'failed', reason: outcome.failure.message, ...ending }
  const exitText = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
  if (!outcome.completed) {
    const stderr = lastLines(stderrTail, 5)
    const reason = `${adapter.displayName} exited (${exitText}) before finishing its turn${stderr ? `: ${stderr}` : ''}`
    active.emit({ type: 'error', code: 'incomplete', message: reason, retryable: false })
    return { status: 'failed', reason, ...ending }
  }
  if (exit.code !== 0) {
    const reason = `${adapter.displayName} exited with ${exitText}`
    active.emit({ type: 'error', code: 'exit_status', message: reason, retryable: false })
    return { status: 'failed', reason, ...ending }
  }
  return { status: 'succeeded', ...ending }
}

/**
 * Brings the run's changes back from the host. A failure fails the run but keeps what the agent reached
 * and what a retried finalize (`hangar runs finalize`) needs; the local workspace is left untouched.
 */
export async function finalizeRemote(
  active: ActiveRun,
  connection: SshConnection,
  shipped: ShippedWorkspace,
  agentEnd: RunEnd,
): Promise<RunEnd> {
  await active.setStatus('finalizing')
  try {
    await syncBack(connection, shipped)
    return { ...agentEnd, workspace: { finalize: 'ok' } }
  } catch (error) {
    const message =
      error instanceof AppError ? error.message : `sync back failed: ${(error as Error).message}`
    active.emit({ type: 'error', code: 'workspace_finalize_failed', message, retryable: true })
    return {
      ...agentEnd,
      status: 'failed',
      reason: `workspace finalize failed: ${message}`,
      workspace: {
        finalize: 'failed',
        reason: message,
        agentStatus: agentEnd.status,
        sync: { ...shipped, agentReason: agentEnd.reason ?? null },
      },
    }
  }
}
