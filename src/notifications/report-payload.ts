// The payload of a trigger's report to a notification channel (event `trigger.report`): a notification's
// fields (project, conversation, agent, link to the run) plus what the GitHub comment carries — the
// trigger, the run's status and reason, the agent's final text as `summary`, and the diff stat.
import type { TriggerReport } from '../triggers/trigger-report.js'
import type { NotificationPayload } from './notification-events.js'

export const REPORT_EVENT = 'trigger.report'

export interface TriggerReportPayload extends NotificationPayload {
  triggerId: string
  trigger: string
  fireId: string
  status: string
  reason: string | null
  diffStat: TriggerReport['diffStat']
}

export function reportPayload(base: NotificationPayload, report: TriggerReport): TriggerReportPayload {
  const { diffStat } = report
  const where = base.project ? ` in ${base.project}` : ''
  const files = `${diffStat.files} file${diffStat.files === 1 ? '' : 's'} changed`
  return {
    ...base,
    event: REPORT_EVENT,
    title: `Trigger ${report.triggerName}: run ${report.status}${where} (${files})`,
    summary: report.summary,
    link: `/runs/${encodeURIComponent(report.runId)}`,
    triggerId: report.triggerId,
    trigger: report.triggerName,
    fireId: report.fireId,
    status: report.status,
    reason: report.reason,
    diffStat,
  }
}
