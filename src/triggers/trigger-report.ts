// What a triggered run reports when it ends (status, the agent's final text truncated, a diff stat from
// its file changes, a link to the run), and where it goes. A `ReportTarget` is the seam: the GitHub issue
// comment is here; the notification channel is in channel-report-target.ts.
import type { ServiceConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'
import { createGuardedFetch } from '../providers/guarded-connection.js'
import type {
  ReportTargetRef,
  Trigger,
  TriggerFire,
  TriggerReportConfig,
} from '../store/repositories/triggers-repository.js'
import type { Store } from '../store/store.js'

export const SUMMARY_MAX_CHARS = 2000

export interface TriggerReport {
  triggerId: string
  triggerName: string
  fireId: string
  runId: string
  conversationId: string | null
  status: string
  reason: string | null
  /** The agent's final text, truncated to SUMMARY_MAX_CHARS. */
  summary: string
  diffStat: { files: number; created: number; modified: number; deleted: number }
  /** The run in the web UI, when the daemon's URL is known. */
  link: string | null
}

export interface ReportTarget {
  /** The `report.type` of a trigger that this target serves. */
  readonly type: string
  /** Throws unless the trigger's user may report there (at creation and before every send). */
  check?(userId: string, config: TriggerReportConfig): Promise<void>
  send(report: TriggerReport, destination: ReportTargetRef | null, trigger?: Trigger): Promise<void>
}

export async function buildReport(
  store: Store,
  trigger: Trigger,
  fire: TriggerFire,
  runId: string,
  baseUrl: string | undefined,
): Promise<TriggerReport> {
  const scope = store.forUser(trigger.userId)
  const run = await scope.runs.get(runId)
  let summary = ''
  if (run?.conversationId) {
    const messages = await scope.conversations.listMessages(run.conversationId)
    const last = messages
      .filter((stored) => stored.runId === runId && stored.message.role === 'assistant')
      .pop()
    if (last && last.message.role === 'assistant')
      summary = last.message.content
        .map((part) => (part.type === 'text' ? part.text : ''))
        .join('')
        .trim()
  }
  if (summary.length > SUMMARY_MAX_CHARS) summary = `${summary.slice(0, SUMMARY_MAX_CHARS)}…`
  const changed = new Map<string, string>()
  for (const envelope of await scope.runs.listEvents(runId, { limit: 10_000 }))
    if (envelope.type === 'file-change') changed.set(envelope.path, envelope.kind)
  const kinds = [...changed.values()]
  return {
    triggerId: trigger.id,
    triggerName: trigger.name,
    fireId: fire.id,
    runId,
    conversationId: run?.conversationId ?? null,
    status: run?.status ?? 'unknown',
    reason: run?.reason ?? null,
    summary,
    diffStat: {
      files: changed.size,
      created: kinds.filter((kind) => kind === 'create').length,
      modified: kinds.filter((kind) => kind === 'modify').length,
      deleted: kinds.filter((kind) => kind === 'delete').length,
    },
    link: baseUrl ? `${baseUrl.replace(/\/$/, '')}/runs/${runId}` : null,
  }
}

export function formatReportMarkdown(report: TriggerReport): string {
  const { diffStat } = report
  const lines = [
    `**Hangar trigger \`${report.triggerName}\`**: run ${report.runId} ${report.status}${report.reason ? ` (${report.reason})` : ''}`,
    '',
    `Files changed: ${diffStat.files} (${diffStat.created} created, ${diffStat.modified} modified, ${diffStat.deleted} deleted)`,
  ]
  if (report.link) lines.push(`Run: ${report.link}`)
  if (report.summary) lines.push('', report.summary)
  return lines.join('\n')
}

const REPOSITORY_PATTERN = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/

/** `owner/name` of letters, digits, `.`, `_`, `-` — never `.` or `..` (a path segment of the API URL). */
function isRepository(value: string): boolean {
  return REPOSITORY_PATTERN.test(value) && value.split('/').every((part) => part !== '.' && part !== '..')
}

/** The issue a delivery names (`repository.full_name`, `issue.number`), when it names one. */
export function issueOfPayload(payload: unknown): ReportTargetRef | null {
  if (payload === null || typeof payload !== 'object') return null
  const record = payload as { repository?: { full_name?: unknown }; issue?: { number?: unknown } }
  const repository = record.repository?.full_name
  const issue = record.issue?.number
  if (typeof repository !== 'string' || !isRepository(repository)) return null
  if (typeof issue !== 'number' || !Number.isSafeInteger(issue) || issue <= 0) return null
  return { repository, issue }
}

/**
 * A comment on a GitHub issue through hangar.yaml's `services.github` (`url`: the API base, e.g.
 * https://api.github.com; `auth.bearerEnv`: the token's environment variable). Loopback and private
 * addresses only with `triggers.allowPrivateNetworks`, checked where the connection is made.
 */
export function createGithubReportTarget(options: {
  service: ServiceConfig | undefined
  env: NodeJS.ProcessEnv
  allowPrivateNetworks: boolean
  fetch?: typeof fetch
}): ReportTarget {
  const guardedFetch = options.fetch ?? createGuardedFetch({ allowPrivate: options.allowPrivateNetworks })
  return {
    type: 'github',
    async send(report, destination) {
      const service = options.service
      if (!service) throw new AppError('invalid_request', 'no services.github in hangar.yaml')
      if (!destination) throw new AppError('invalid_request', 'the delivery named no issue to comment on')
      if (!isRepository(destination.repository) || !Number.isSafeInteger(destination.issue))
        throw new AppError('invalid_request', `not an issue: ${destination.repository}#${destination.issue}`)
      const token = service.auth ? options.env[service.auth.bearerEnv] : undefined
      if (service.auth && !token)
        throw new AppError(
          'invalid_request',
          `${service.auth.bearerEnv} is not set in the daemon's environment`,
        )
      const url = `${service.url.replace(/\/$/, '')}/repos/${destination.repository}/issues/${destination.issue}/comments`
      const response = await guardedFetch(url, {
        method: 'POST',
        headers: {
          accept: 'application/vnd.github+json',
          'content-type': 'application/json',
          'user-agent': 'hangar',
          ...(token && { authorization: `Bearer ${token}` }),
        },
        body: JSON.stringify({ body: formatReportMarkdown(report) }),
        signal: AbortSignal.timeout(15_000),
      })
      await response.arrayBuffer().catch(() => undefined)
      if (!response.ok)
        throw new AppError('upstream_error', `GitHub answered ${response.status} to the report comment`, {
          retryable: response.status >= 500 || response.status === 429,
        })
    },
  }
}
