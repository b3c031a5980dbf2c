// The report of a triggered run to one of the trigger creator's notification channels (`report: { type:
// 'channel', channelId }`): queued on the notifications service's delivery queue (signed, retried, in the
// channel's delivery log) as event `trigger.report`. Only the creator's own channel: another user's channel
// is not found, like a channel that does not exist — when the trigger is made and again when it reports.
import { AppError } from '../core/errors.js'
import type { NotificationService } from '../notifications/notification-service.js'
import type { ReportTarget } from './trigger-report.js'

export function createChannelReportTarget(options: {
  notifications: Pick<NotificationService, 'channel' | 'report'>
}): ReportTarget {
  function channelIdOf(config: { type: string; channelId?: string }): string {
    if (config.type !== 'channel' || !config.channelId)
      throw new AppError('invalid_request', 'report type channel needs channelId', {
        hint: 'see hangar notify list',
        details: { field: 'report.channelId' },
      })
    return config.channelId
  }
  return {
    type: 'channel',
    async check(userId, config) {
      await options.notifications.channel(userId, channelIdOf(config))
    },
    async send(report, _destination, trigger) {
      if (!trigger?.report) throw new AppError('invalid_request', 'the trigger reports nowhere')
      await options.notifications.report(trigger.userId, channelIdOf(trigger.report), report)
    },
  }
}
