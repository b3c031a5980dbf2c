// The browser's own notification while a Hangar tab is open but not looked at: a proposal waiting. It
// uses the same tag as the Web Push message for that proposal, so a browser that gets both shows one.
// Nothing is asked for here: permission comes from Settings → Notifications.
import type { EventEnvelope } from '../../../src/core/events'
import { navigate } from './router'

export function notifyInBrowser(envelope: EventEnvelope | null): void {
  if (!envelope || envelope.type !== 'approval-required') return
  if (typeof Notification === 'undefined' || Notification.permission !== 'granted') return
  if (document.visibilityState === 'visible') return
  const link = `/approvals?action=${encodeURIComponent(envelope.actionId)}`
  const notification = new Notification('An agent needs your approval', {
    body: envelope.summary,
    tag: envelope.actionId,
    icon: '/icon-192.png',
  })
  notification.onclick = () => {
    window.focus()
    navigate(link)
    notification.close()
  }
}
