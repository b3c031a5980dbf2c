// hangar run — one run of an agent, in process, in place (or --isolate), every event stored and shown.
import path from 'node:path'
import type { Command } from 'commander'
import { describeDetectionSource } from '../../adapters/detection.js'
import { endpointForAdapter } from '../../adapters/model-endpoint.js'
import { loadProfileSkills } from '../../adapters/skills.js'
import { AppError } from '../../core/errors.js'
import type { Runtime } from '../../main.js'
import { parseLimitDuration } from '../../core/duration.js'
import { executeCliRun } from '../../runs/execute-cli-run.js'
import { runLifecycle } from '../../runs/workspace-setup.js'
import { sandboxSettingsFor } from '../../sandbox/run-sandbox.js'
import { cliTimeoutSeconds, runLimitsFor, startRunLimits } from '../../runs/run-limits.js'
import { loadUserProfiles, resolveAgentOrDefault } from '../../runs/resolve-agent.js'
import { assertResumable, releaseIfOwnerGone } from '../../runs/resume-run.js'
import { checkStartPoint } from '../../workspaces/review/refs.js'
import { type GlobalOptions, openRuntime } from '../context.js'
import { type CliIo, EXIT, ExitWith, usageError } from '../output.js'
import { createRunPrinter } from '../run-output.js'
import { runAttempts } from './attempts-command.js'

interface RunOptions {
  agent?: string
  agents?: string
  model?: string
  cwd?: string
  isolate?: boolean
  json?: boolean
  yes?: boolean
  resume?: string
  timeout?: string
  from?: string
}

const EXIT_BY_STATUS: Record<string, number> = {
  succeeded: EXIT.ok,
  failed: EXIT.failed,
  interrupted: EXIT.failed,
  awaiting_confirmation: EXIT.awaitingConfirmation,
  cancelled: EXIT.cancelled,
}

async function readPrompt(io: CliIo, words: string[]): Promise<string> {
  if (words.length > 0 && !(words.length === 1 && words[0] === '-')) return words.join(' ')
  if (!io.stdin || io.stdin.isTTY)
    throw usageError('no prompt given', 'hangar run "what to do", or pipe it on stdin')
  let text = ''
  for await (const chunk of io.stdin) text += chunk.toString()
  if (!text.trim()) throw usageError('the prompt on stdin is empty')
  return text.trim()
}

async function runOnce(
  runtime: Runtime,
  io: CliIo,
  prompt: string,
  options: RunOptions,
  onCancel: (handler: () => void) => void,
) {
  // The same rule as the daemon's runs: inside the project or server.allowedRoots, never the data dir.
  const cwd = await runtime.workspacePolicy
    .resolveRunDirectory(options.cwd ?? '.', io.cwd)
    .catch((error: unknown) => {
      // A directory the run may not use is a usage error of this command (exit code 2).
      if (error instanceof AppError && error.code === 'invalid_request')
        throw usageError(`--cwd: ${error.message}`, error.hint)
      throw error
    })
  const owner = runtime.owner
  // `hangar run` is the owner's, in place where it is run: inside a project, or anywhere allowed.
  const project = await runtime.projects.containing(cwd)
  if (!options.json) {
    io.stderr.write(
      project
        ? `In project ${project.name} (${project.path})\n`
        : `Owner run outside any project, in ${cwd}\n`,
    )
  }
  const runs = runtime.store.forUser(owner.id).runs
  const found = options.resume ? await runs.get(options.resume) : undefined
  if (options.resume && !found)
    throw new AppError('not_found', `no run ${options.resume}`, { hint: 'see hangar runs list' })
  // A run whose `hangar run` was killed is still marked running: interrupted now, it can be resumed.
  const previous = found && (await releaseIfOwnerGone(runtime.runs, runs, owner.id, found))
  const detection = await runtime.detectAgents()
  const { adapters } = detection
  // Which CLIs are installed and signed in may be a day old: say so, before it decides anything.
  if (detection.fromCache) io.stderr.write(`agents ${describeDetectionSource(detection)}\n`)
  const agent = await resolveAgentOrDefault(options.agent ?? previous?.agent, {
    config: runtime.config,
    registry: runtime.adapters,
    detected: adapters,
    userProfiles: await loadUserProfiles(runtime.store, owner.id),
    builtinReadiness: () => runtime.builtinReadiness(owner.id),
  })
  if (previous) {
    const cli = agent.kind === 'cli' ? agent.adapter : undefined
    try {
      assertResumable(previous, cli?.id ?? 'builtin', cli?.capabilities)
    } catch (error) {
      // The wrong agent for that run is a usage error of this command (exit code 2).
      if (error instanceof AppError && error.code === 'invalid_request')
        throw usageError(error.message, error.hint)
      throw error
    }
  }
  const printer = createRunPrinter(io, { json: options.json ?? false })
  const controller = new AbortController()
  onCancel(() => controller.abort())
  if (agent.kind === 'builtin') {
    const workspace = await workspaceFor(runtime, io, cwd, previous?.cwd, options)
    return runtime.builtin.start(
      owner.id,
      {
        agent: agent.name,
        profile: agent.profile,
        prompt,
        cwd: workspace,
        project: project?.name ?? path.basename(runtime.projectDir),
        projectId: project?.id ?? null,
        model: options.model,
        resumeRunId: previous?.id,
        approveSafe: options.yes ?? false,
        timeout: options.timeout,
      },
      { onDelivered: (envelopes) => envelopes.forEach(printer), signal: controller.signal },
    )
  }
  const workspace = await workspaceFor(runtime, io, cwd, previous?.cwd, options)
  const endpoint = endpointForAdapter(agent.adapter, io.env, runtime.config.providers)
  const target = runtime.targets.forProfile(agent.profile?.target)
  const model = options.model ?? agent.profile?.model ?? endpoint?.model
  const skills = await loadProfileSkills(runtime.projectDir, agent.profile?.skills)

  const active = await runtime.runs.start(
    owner.id,
    {
      agent: agent.name,
      adapter: agent.adapter.id,
      model: model ?? null,
      prompt,
      cwd: workspace,
      projectId: project?.id ?? null,
      ...(previous && { continues: previous.id }),
    },
    (envelopes) => envelopes.forEach(printer),
  )
  // `--timeout` replaces the profile's wall clock; a tripped limit cancels as Ctrl-C does (run-limits.ts).
  const limits = runLimitsFor(agent.profile, options.timeout)
  const limited = startRunLimits(active, { limits, activity: runtime.runActivity, signal: controller.signal })
  // An --isolate workspace gets its project's lifecycle: setup before the agent, HANGAR_PORT.
  const lifecycle = await runLifecycle(runtime.workspaceLifecycle, owner.id, active, {
    env: io.env,
    signal: limited.signal,
    busy: limited.busy,
  })
  const running = executeCliRun(
    active,
    {
      agent: agent.name,
      adapter: agent.adapter,
      executable: agent.detected.executable!,
      prompt,
      cwd: workspace,
      model,
      endpoint,
      resumeSessionId: previous?.sessionId ?? undefined,
      extraArgs: agent.profile?.cliArgs ?? [],
      permissions: agent.profile?.permissions,
      skills,
      isolateHome: agent.profile?.isolateHome ?? false,
      env: { ...io.env, ...lifecycle.variables },
      timeoutSeconds: cliTimeoutSeconds(limits),
      target,
      beforeAgent: lifecycle.setup,
      sandbox: {
        settings: sandboxSettingsFor(
          agent.profile,
          runtime.config,
          project?.name ?? path.basename(runtime.projectDir),
        ),
        dataDir: runtime.dataDir,
        log: runtime.log,
      },
      route: runtime.modelProxy.forCliRun({
        userId: owner.id,
        agent: agent.name,
        profile: agent.profile,
        adapter: agent.adapter,
        direct: endpoint,
        remote: target !== undefined,
      }),
    },
    {
      supervisor: limited.reporting(runtime.supervisor),
      signal: limited.signal,
      runFilesRoot: path.join(runtime.dataDir, 'runs'),
    },
  )
  return active.end(await limited.finish(running))
}

/**
 * In place in `cwd` (a resumed run: where it ran), or with --isolate a one-off workspace of `cwd` — a
 * detached worktree of HEAD, or a copy outside git — which stays for the user to look at.
 */
async function workspaceFor(
  runtime: Runtime,
  io: CliIo,
  cwd: string,
  previousCwd: string | undefined,
  options: RunOptions,
): Promise<string> {
  if (!options.isolate && !options.from) return previousCwd ?? cwd
  // --from: a worktree of that branch, tag or commit (checked to exist first).
  if (options.from) await checkStartPoint(cwd, options.from, '--from')
  const workspace = await runtime.workspaces.isolated(runtime.owner.id, cwd, {
    ...(options.from && { baseRef: options.from }),
  })
  if (!options.json) {
    io.stderr.write(
      `Working in ${workspace.kind === 'copy' ? 'a copy' : 'a worktree'} at ${workspace.cwd} (hangar workspaces remove ${workspace.id} removes it)\n`,
    )
  }
  return workspace.cwd
}

/** The exit codes scripts can rely on, from EXIT and EXIT_BY_STATUS, in `hangar run --help`. */
const RUN_EXIT_CODES_HELP = `
Exit codes:
  ${EXIT.ok}    the run succeeded
  ${EXIT.failed}    the run failed or was interrupted, or Hangar could not start it
  ${EXIT.usage}    usage or configuration error: unknown flag, agent or profile, bad hangar.yaml
  ${EXIT.awaitingConfirmation}    the run proposed writes and waits: hangar actions confirm|reject ID
  ${EXIT.cancelled}  the run was cancelled (Ctrl-C, hangar runs cancel)`

export function registerRunCommand(
  program: Command,
  io: CliIo,
  globals: () => GlobalOptions,
  signals: { onShutdown(handler: (signal: string) => void): void },
): void {
  program
    .command('run')
    .description('run an agent once on a prompt, here and now (Ctrl-C cancels)')
    .argument('[prompt...]', 'what the agent should do (or "-" / nothing to read it from stdin)')
    .option(
      '--agent <name>',
      'a profile from hangar.yaml or an adapter id (default: defaultAgent, else the first signed-in CLI)',
    )
    .option(
      '--agents <names>',
      'compare attempts: the same prompt with each of these agents (comma-separated, up to 8) at once, each in a worktree of its own, shown side by side with the project check result',
    )
    .option('--model <model>', 'the model to ask for')
    .option('--cwd <dir>', 'where the agent works (default: the current directory)')
    .option(
      '--isolate',
      'work in a one-off workspace under the data dir: a detached git worktree of HEAD, or outside git a full copy of the directory (node_modules too); it stays until hangar workspaces remove ID',
    )
    .option('--json', 'print one event envelope per line')
    .option('--yes', 'approve safe_* proposals without asking (built-in agent)')
    .option('--resume <runId>', "continue that run's agent session")
    .option(
      '--from <ref>',
      'work in a one-off worktree that starts at this local branch, tag or commit (implies --isolate)',
    )
    .option(
      '--timeout <duration>',
      "stop the run after this long, e.g. 90s, 30m, 2h or off (default: the profile's timeout, 60m)",
    )
    .addHelpText('after', RUN_EXIT_CODES_HELP)
    .action(async (words: string[], options: RunOptions) => {
      if (options.timeout !== undefined) parseLimitDuration(options.timeout, '--timeout')
      if (options.from && options.resume)
        throw usageError('--from and --resume exclude each other', 'a resumed run works where it ran')
      const prompt = await readPrompt(io, words)
      if (options.agents !== undefined) {
        const clash = (['agent', 'model', 'isolate', 'resume', 'yes', 'timeout'] as const).find(
          (name) => options[name] !== undefined,
        )
        if (clash)
          throw usageError(`--${clash} does not go with --agents`, "each attempt runs its agent's profile")
        return runAttempts(
          io,
          globals(),
          prompt,
          {
            agents: options.agents,
            ...(options.cwd && { cwd: options.cwd }),
            ...(options.json && { json: true }),
          },
          (handler) => signals.onShutdown(() => handler()),
        )
      }
      const runtime = await openRuntime(io, globals())
      try {
        // The run's model traffic goes through a proxy of its own, served by this process.
        const proxy = await runtime.serveProxy()
        try {
          const run = await runOnce(runtime, io, prompt, options, (handler) =>
            signals.onShutdown(() => handler()),
          )
          const code = EXIT_BY_STATUS[run.status] ?? EXIT.failed
          if (code !== EXIT.ok) throw new ExitWith(code)
        } finally {
          await proxy.close()
        }
      } finally {
        await runtime.close()
      }
    })
}
