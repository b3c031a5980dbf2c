// hangar feeds PROFILE — the profile's resolved feed manifest (with fetch state from a running daemon).
// hangar env PROFILE — a proxy token for the profile and the environment that sends any agent started by
// hand through the daemon's proxy (feeds, metering and key custody, as for Hangar's own runs).
import type { Command } from 'commander'
import { isAdapterId } from '../../core/adapter-ids.js'
import { parseDuration } from '../../core/duration.js'
import { AppError } from '../../core/errors.js'
import type { FeedFetchState, ResolvedFeed } from '../../feeds/index.js'
import { STAND_IN_KEY } from '../../proxy/forward-upstream.js'
import { configProfileWarnings, type ProfileProblem } from '../../runs/profile-problems.js'
import { type GlobalOptions, resolveDataDir, viaDaemonOrStore, withRuntime } from '../context.js'
import { readDaemonFile } from '../daemon-file.js'
import { findProject, loadConfigFile } from '../project.js'
import { type CliIo, formatTable, printJson, usageError } from '../output.js'

type FeedRow = ResolvedFeed & { state?: FeedFetchState }

/**
 * An unknown profile name is a usage error (exit 2) in both `hangar feeds` and `hangar env`, with or
 * without a daemon: the same words and exit code whichever process noticed.
 */
function checkProfile(name: string, profiles: readonly string[]): void {
  if (profiles.includes(name) || isAdapterId(name)) return
  throw unknownProfile(name, profiles)
}

/** The daemon's 404 for a profile, said as the CLI says it when it checks hangar.yaml itself. */
async function asUnknownProfile(error: unknown, name: string, io: CliIo): Promise<never> {
  if (!(error instanceof AppError) || error.code !== 'not_found') throw error
  const config = await loadConfigFile(findProject(io.cwd, io.env).configFile, io.env)
  throw unknownProfile(name, Object.keys(config.agents))
}

function unknownProfile(name: string, profiles: readonly string[]): AppError {
  return usageError(
    `unknown agent profile "${name}"`,
    profiles.length
      ? `use one of ${profiles.join(', ')}, or an adapter id`
      : 'declare it under agents: in hangar.yaml',
  )
}

function shellValue(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`
}

export function registerProxyCommands(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('feeds')
    .description("show a profile's context feeds: names, sources, TTLs and URLs (and their last fetch)")
    .argument('<profile>', 'a profile from hangar.yaml')
    .option('--json', 'print JSON')
    .action(async (profile: string, options: { json?: boolean }) => {
      const { feeds, issues } = await viaDaemonOrStore<{
        feeds: FeedRow[]
        issues?: ProfileProblem[]
      }>(
        io,
        globals(),
        { method: 'GET', route: `/api/profiles/${encodeURIComponent(profile)}/feeds` },
        async (runtime) => {
          checkProfile(profile, Object.keys(runtime.config.agents))
          return {
            feeds: await runtime.modelProxy.manifestFor(profile),
            issues: configProfileWarnings(profile, runtime.config),
          }
        },
      ).catch((error: unknown) => asUnknownProfile(error, profile, io))
      // What is wrong with the profile (a stored one a later hangar.yaml no longer supports: an error, it
      // cannot run) or doubtful (feeds with proxy: false: a warning), before the feeds.
      for (const issue of issues ?? [])
        io.stderr.write(
          `${issue.severity ?? 'error'}: ${issue.path ? `${issue.path}: ` : ''}${issue.message}\n`,
        )
      if (options.json) return printJson(io, feeds)
      if (feeds.length === 0) {
        io.stderr.write(
          `Profile "${profile}" has no feeds. Add them under agents.${profile}.feeds in hangar.yaml.\n`,
        )
        return
      }
      io.stdout.write(
        formatTable(
          ['NAME', 'SOURCE', 'TTL', 'URL', 'LAST FETCH'],
          feeds.map((feed) => [
            feed.name,
            feed.source,
            `${feed.ttl}s`,
            feed.url,
            feed.refused
              ? `refused: ${feed.refused}`
              : feed.state
                ? `${feed.state.status}${feed.state.lastSuccessAt ? ` ${feed.state.lastSuccessAt}` : ''}${feed.state.reason ? ` (${feed.state.reason})` : ''}`
                : '-',
          ]),
        ),
      )
    })

  program
    .command('env')
    .description(
      "mint a proxy token for a profile and print the environment that routes an agent through Hangar's proxy",
    )
    .argument('<profile>', 'a profile from hangar.yaml, or an adapter id')
    .option('--expires-in <duration>', 'token lifetime, e.g. 12h, 7d', '30d')
    .option('--json', 'print { token, expiresAt, endpoints } as JSON')
    .action(async (profile: string, options: { expiresIn: string; json?: boolean }) => {
      const expiresInMs = parseDuration(options.expiresIn, '--expires-in')
      const dataDir = resolveDataDir(globals(), io)
      const minted = await withRuntime(io, globals(), async (runtime) => {
        // The name first: a wrong name is wrong whether or not a daemon runs (as in hangar feeds).
        checkProfile(profile, Object.keys(runtime.config.agents))
        const daemon = await readDaemonFile(dataDir)
        if (!daemon) {
          throw new AppError('daemon_not_running', 'the proxy is served by the daemon, and none is running', {
            hint: 'start it with hangar up, then run hangar env again',
          })
        }
        runtime.modelProxy.setBaseUrl(daemon.url)
        return runtime.modelProxy.mintForProfile('system', runtime.owner.id, profile, expiresInMs)
      })
      const { endpoints } = minted
      if (options.json) {
        return printJson(io, { token: minted.token, expiresAt: minted.expiresAt, endpoints })
      }
      const codexProvider = `model_providers.hangar={name="Hangar",base_url="${endpoints.openai}",env_key="OPENAI_API_KEY",wire_api="responses"}`
      io.stdout.write(
        [
          `export ANTHROPIC_BASE_URL=${shellValue(endpoints.anthropic)}`,
          `export OPENAI_BASE_URL=${shellValue(endpoints.openai)}`,
          `export GOOGLE_GEMINI_BASE_URL=${shellValue(endpoints.gemini)}`,
          `# Where Hangar holds the provider key, any key works (the proxy swaps in the real one), e.g.:`,
          `#   export OPENAI_API_KEY=${STAND_IN_KEY}`,
          `# Codex ignores OPENAI_BASE_URL; start it with:`,
          `#   codex -c model_provider=hangar -c ${shellValue(codexProvider)}`,
          `# Token ${minted.id} for "${profile}" expires ${minted.expiresAt}; revoke it with: hangar token revoke ${minted.id}`,
          `# Run: eval "$(hangar env ${profile})"`,
          '',
        ].join('\n'),
      )
    })
}
