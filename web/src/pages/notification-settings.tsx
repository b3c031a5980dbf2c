// Notifications: Web Push on this device (the service worker shows them with no tab open; a click opens
// the card), webhooks (generic JSON signed with a secret shown once, Slack, Discord, ntfy), which events
// each channel gets, a test send and each channel's delivery log. While a tab is open, the browser's own
// notification is shown for a proposal waiting (see lib/browser-notifications.ts).
import { type FormEvent, useState } from 'react'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import { formatWhen } from '../lib/format'
import { useProjects } from '../lib/use-projects'
import { useResource } from '../lib/use-resource'

const EVENTS = [
  ['approval.requested', 'approval needed'],
  ['run.finished', 'run finished'],
  ['run.failed', 'run failed'],
  ['budget.reached', 'budget reached'],
  ['workspace.landed', 'workspace landed'],
] as const

interface Channel {
  id: string
  type: 'webpush' | 'webhook'
  format: string
  name: string
  url: string
  events: string[]
  projectIds: string[] | null
}

interface Delivery {
  id: string
  event: string
  status: string
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  createdAt: string
}

/** The VAPID key as PushManager.subscribe takes it. */
function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, '+').replace(/_/g, '/')
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4))
  const bytes = new Uint8Array(new ArrayBuffer(binary.length))
  for (let index = 0; index < binary.length; index++) bytes[index] = binary.charCodeAt(index)
  return bytes
}

function sameBytes(a: ArrayBuffer | null, b: Uint8Array): boolean {
  if (!a || a.byteLength !== b.length) return false
  const bytes = new Uint8Array(a)
  return bytes.every((byte, index) => byte === b[index])
}

/**
 * This browser's subscription for this instance's key. One made earlier with another key (another
 * instance on this origin, or its keys were made anew) is dropped: its push service refuses every message
 * this instance signs for it, and subscribe() refuses a second key while it exists.
 */
async function subscribeWith(
  pushManager: PushManager,
  key: Uint8Array<ArrayBuffer>,
): Promise<PushSubscription> {
  const existing = await pushManager.getSubscription()
  if (existing && sameBytes(existing.options.applicationServerKey, key)) return existing
  await existing?.unsubscribe()
  return pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })
}

export function NotificationSettingsSection() {
  const toast = useToast()
  const channels = useResource<Channel[]>('/api/notifications/channels')
  const [url, setUrl] = useState('')
  const [format, setFormat] = useState('generic')
  const [events, setEvents] = useState<string[]>(EVENTS.map(([name]) => name))
  const [secret, setSecret] = useState<string>()
  const [log, setLog] = useState<{ channel: string; deliveries: Delivery[] }>()
  const pushSupported = 'serviceWorker' in navigator && 'PushManager' in window
  const { projects, nameOf } = useProjects()
  // '' = every project the user may see; else one project's runs only.
  const [projectId, setProjectId] = useState('')
  const scope = projectId ? { projectIds: [projectId] } : {}

  async function enablePush() {
    try {
      if ((await Notification.requestPermission()) !== 'granted') {
        toast.error(new Error('notifications are blocked for this site in the browser'))
        return
      }
      const { publicKey } = await api<{ publicKey: string }>('GET', '/api/notifications/vapid-key')
      const registration = await navigator.serviceWorker.ready
      const subscription = await subscribeWith(registration.pushManager, keyBytes(publicKey))
      await api('POST', '/api/notifications/channels', {
        type: 'webpush',
        subscription: subscription.toJSON(),
        events,
        ...scope,
        name: `push ${navigator.platform || 'browser'}`,
      })
      toast.success('Push notifications are on for this browser')
      await channels.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  async function addWebhook(event: FormEvent) {
    event.preventDefault()
    try {
      const created = await api<Channel & { secret?: string }>('POST', '/api/notifications/channels', {
        type: 'webhook',
        url: url.trim(),
        format,
        events,
        ...scope,
      })
      setSecret(created.secret)
      setUrl('')
      await channels.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  async function test(channel: Channel) {
    try {
      await api('POST', `/api/notifications/channels/${channel.id}/test`)
      toast.success(`Test sent to ${channel.name}`)
    } catch (error) {
      toast.error(error)
    }
  }

  async function showLog(channel: Channel) {
    try {
      const deliveries = await api<Delivery[]>('GET', `/api/notifications/channels/${channel.id}/deliveries`)
      setLog({ channel: channel.id, deliveries })
    } catch (error) {
      toast.error(error)
    }
  }

  async function remove(channel: Channel) {
    if (!window.confirm(`Remove ${channel.name}?`)) return
    try {
      await api('DELETE', `/api/notifications/channels/${channel.id}`)
      await channels.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  const toggle = (name: string) =>
    setEvents((current) =>
      current.includes(name) ? current.filter((item) => item !== name) : [...current, name],
    )

  return (
    <section className="card" aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Notifications</h2>
      <fieldset className="row wrap" aria-label="Events">
        {EVENTS.map(([name, label]) => (
          <label key={name} className="check">
            <input type="checkbox" checked={events.includes(name)} onChange={() => toggle(name)} />
            {label}
          </label>
        ))}
      </fieldset>
      {projects.length > 0 && (
        <label>
          <span className="small muted">Projects</span>
          <select value={projectId} onChange={(event) => setProjectId(event.target.value)}>
            <option value="">all of mine</option>
            {projects.map((project) => (
              <option key={project.id} value={project.id}>
                {project.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <div className="row wrap">
        <button type="button" className="button" disabled={!pushSupported} onClick={() => void enablePush()}>
          Notify this browser (Web Push)
        </button>
        {!pushSupported && <span className="muted small">This browser has no Web Push.</span>}
      </div>
      <form className="row wrap" onSubmit={(event) => void addWebhook(event)} aria-label="Add a webhook">
        <label className="grow">
          <span className="small muted">Webhook URL</span>
          <input
            value={url}
            onChange={(event) => setUrl(event.target.value)}
            required
            type="url"
            placeholder="https://hooks.slack.com/services/…"
          />
        </label>
        <label>
          <span className="small muted">Shape</span>
          <select value={format} onChange={(event) => setFormat(event.target.value)}>
            <option value="generic">generic JSON (signed)</option>
            <option value="slack">Slack</option>
            <option value="discord">Discord</option>
            <option value="ntfy">ntfy</option>
          </select>
        </label>
        <button type="submit" className="button primary">
          Add webhook
        </button>
      </form>
      {secret && (
        <div className="secret-once" role="status">
          <p>
            Signing secret — copy it now, it will not be shown again (X-Hangar-Signature-256 = sha256=HMAC).
          </p>
          <div className="row">
            <code className="grow secret" data-testid="new-channel-secret">
              {secret}
            </code>
            <button type="button" className="button ghost" onClick={() => setSecret(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {channels.data && channels.data.length === 0 && <p className="empty">No channels.</p>}
      <ul className="list" aria-label="Channels">
        {(channels.data ?? []).map((channel) => (
          <li key={channel.id} className="list-item" data-channel-id={channel.id}>
            <span className="grow">
              <span className="list-title">{channel.name}</span>
              <span className="muted small">
                {channel.format} · {channel.events.join(', ')} ·{' '}
                {channel.projectIds
                  ? channel.projectIds.map((id) => nameOf(id) ?? id).join(', ')
                  : 'all projects'}{' '}
                · {channel.url}
              </span>
              {log?.channel === channel.id && (
                <ul className="small" aria-label="Deliveries">
                  {log.deliveries.length === 0 && <li className="muted">No deliveries yet.</li>}
                  {log.deliveries.map((delivery) => (
                    <li key={delivery.id}>
                      {formatWhen(delivery.createdAt)} · {delivery.event} · {delivery.status} ·{' '}
                      {delivery.attempts} attempt(s)
                      {delivery.lastStatusCode ? ` · HTTP ${delivery.lastStatusCode}` : ''}
                      {delivery.lastError ? ` · ${delivery.lastError}` : ''}
                    </li>
                  ))}
                </ul>
              )}
            </span>
            <button type="button" className="button small-button ghost" onClick={() => void test(channel)}>
              Test
            </button>
            <button type="button" className="button small-button ghost" onClick={() => void showLog(channel)}>
              Log
            </button>
            <button type="button" className="button small-button ghost" onClick={() => void remove(channel)}>
              Remove
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}
