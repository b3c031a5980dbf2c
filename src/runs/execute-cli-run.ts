// Executes one run of an agent CLI: skills placed, launch plan built, process supervised, every stdout
// line parsed into events, and the final status decided from what the CLI said — not from its exit code
// (Gemini exits 0 on SIGTERM; Copilot prints a result after an abort).
import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { UsageTotals } from '../core/events.js'
import type { PlacedSkills, Skill } from '../adapters/skills.js'
import { placeSkills } from '../adapters/skills.js'
import { reapProcessGroup, type Supervisor } from '../adapters/supervisor.js'
import type { AdapterDef, LaunchInput, ModelEndpoint, ResolvedExecutable } from '../adapters/types.js'
import type { ActiveRun, RunEnd } from './run-service.js'

export interface CliRunRequest {
  agent: string
  adapter: AdapterDef
  executable: ResolvedExecutable
  prompt: string
  cwd: string
  model?: string | undefined
  endpoint?: ModelEndpoint | undefined
  resumeSessionId?: string | undefined
  extraArgs?: readonly string[]
  skills?: readonly Skill[]
  /** Give the CLI a fresh HOME instead of the user's (tests, or a profile that asks for it). */
  isolateHome?: boolean
  /** The base environment; Hangar's own secrets are removed before the CLI sees it. */
  env: Readonly<Record<string, string | undefined>>
  timeoutSeconds?: number
}

/** Variables of Hangar itself that an agent process must never inherit. */
const HANGAR_PRIVATE_ENV = ['HANGAR_SECRET_KEYS', 'HANGAR_DATABASE_URL', 'HANGAR_TEST_DATABASE_URL']

function agentEnvironment(
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  const copy: Record<string, string | undefined> = { ...env }
  for (const name of HANGAR_PRIVATE_ENV) delete copy[name]
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
  try {
    skills = await placeSkills(
      request.skills ?? [],
      adapter.skills,
      request.cwd,
      request.prompt,
      active.run.id,
    )
    const env = agentEnvironment(request.env)
    const home = request.isolateHome ? path.join(runDir, 'home') : (env.HOME ?? os.homedir())
    const input: LaunchInput = {
      prompt: skills.prompt,
      cwd: request.cwd,
      model: request.model ?? request.endpoint?.model,
      endpoint: request.endpoint,
      resumeSessionId: request.resumeSessionId,
      runDir,
      home,
      isolatedHome: request.isolateHome ?? false,
      env: { ...env, HOME: home },
      extraArgs: request.extraArgs ?? [],
      executable: request.executable,
      timeoutSeconds: request.timeoutSeconds ?? 3600,
    }
    active.emit({
      type: 'run-start',
      agent: request.agent,
      adapter: adapter.id,
      ...(input.model && { model: input.model }),
      cwd: request.cwd,
      proxied: false,
      ...(skills.strategy !== 'none' && {
        skills: { strategy: skills.strategy, names: (request.skills ?? []).map((skill) => skill.name) },
      }),
    })
    const plan = adapter.buildLaunch(input)
    const parser = adapter.createParser({ cwd: request.cwd })

    let processHandle
    try {
      processHandle = await options.supervisor.start(plan, request.cwd, {
        onLine: (line) => {
          for (const event of parser.line(line)) active.emit(event)
        },
      })
    } catch (error) {
      const message = `cannot start ${adapter.displayName}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`
      active.emit({ type: 'error', code: 'spawn_failed', message, retryable: false })
      return { status: 'failed', reason: message }
    }
    await active.setProcess(processHandle.pid)
    await active.setStatus('running')

    const onAbort = () => void processHandle.cancel((adapter.cancelGraceSeconds ?? 3) * 1000)
    if (options.signal?.aborted) onAbort()
    options.signal?.addEventListener('abort', onAbort, { once: true })
    const exit = await processHandle.exited
    options.signal?.removeEventListener('abort', onAbort)
    // Helpers the CLI left in its group (a relaunched worker, a detached child) go with it.
    await reapProcessGroup(processHandle.pgid, 1000)

    const { events, outcome } = parser.finish()
    for (const event of events) active.emit(event)
    const usage: UsageTotals | undefined = outcome.usage
    const ending = { ...(outcome.sessionId && { sessionId: outcome.sessionId }), ...(usage && { usage }) }

    if (exit.cancelled) return { status: 'cancelled', reason: 'cancelled by the user', ...ending }
    if (outcome.failure) return { status: 'failed', reason: outcome.failure.message, ...ending }
    const exitText = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
    if (!outcome.completed) {
      const stderr = lastLines(processHandle.stderrTail(), 5)
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
  } finally {
    await skills?.cleanup().catch(() => {})
    await rm(runDir, { recursive: true, force: true }).catch(() => {})
  }
}
