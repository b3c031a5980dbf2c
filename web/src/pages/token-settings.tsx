// Personal access tokens: create one (shown once, with a copy button), list them, revoke them. Proxy
// tokens minted by `hangar env` are listed here too and revoked the same way.
import { type FormEvent, useState } from 'react'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import { formatWhen } from '../lib/format'
import type { AccessToken } from '../lib/types'
import { useResource } from '../lib/use-resource'

export function TokenSettingsSection() {
  const toast = useToast()
  const tokens = useResource<AccessToken[]>('/api/tokens')
  const [name, setName] = useState('')
  const [expiresIn, setExpiresIn] = useState('90d')
  const [approve, setApprove] = useState(false)
  const [created, setCreated] = useState<{ name: string; token: string }>()

  async function create(event: FormEvent) {
    event.preventDefault()
    try {
      const token = await api<AccessToken & { token: string }>('POST', '/api/tokens', {
        name: name.trim(),
        expiresIn,
        scopes: approve ? ['api', 'approve'] : ['api'],
      })
      setCreated({ name: token.name, token: token.token })
      setName('')
      await tokens.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  async function revoke(token: AccessToken) {
    if (!window.confirm(`Revoke "${token.name}"? Anything using it stops working at once.`)) return
    try {
      await api('DELETE', `/api/tokens/${token.id}`)
      toast.success(`Revoked ${token.name}`)
      await tokens.reload()
    } catch (error) {
      toast.error(error)
    }
  }

  const live = (tokens.data ?? []).filter((token) => !token.revokedAt)
  return (
    <section className="card" aria-labelledby="tokens-heading">
      <h2 id="tokens-heading">Personal access tokens</h2>
      <form className="row wrap" onSubmit={(event) => void create(event)} aria-label="Create a token">
        <label className="grow">
          <span className="small muted">Name</span>
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            required
            maxLength={100}
            placeholder="e.g. laptop curl"
          />
        </label>
        <label>
          <span className="small muted">Expires in</span>
          <select value={expiresIn} onChange={(event) => setExpiresIn(event.target.value)}>
            <option value="7d">7 days</option>
            <option value="30d">30 days</option>
            <option value="90d">90 days</option>
            <option value="365d">1 year</option>
          </select>
        </label>
        <label className="check">
          <input type="checkbox" checked={approve} onChange={(event) => setApprove(event.target.checked)} />
          may approve proposals over MCP
        </label>
        <button type="submit" className="button primary">
          Create token
        </button>
      </form>
      {created && (
        <div className="secret-once" role="status">
          <p>
            <strong>{created.name}</strong>: copy it now — it will not be shown again.
          </p>
          <div className="row">
            <code className="grow secret" data-testid="new-token">
              {created.token}
            </code>
            <button
              type="button"
              className="button"
              onClick={() =>
                void navigator.clipboard?.writeText(created.token).then(() => toast.success('Copied'))
              }
            >
              Copy
            </button>
            <button type="button" className="button ghost" onClick={() => setCreated(undefined)}>
              Done
            </button>
          </div>
        </div>
      )}
      {tokens.data && live.length === 0 && <p className="empty">No tokens.</p>}
      <ul className="list" aria-label="Tokens">
        {live.map((token) => (
          <li key={token.id} className="list-item" data-token-id={token.id}>
            <span className="grow">
              <span className="list-title">{token.name}</span>
              <span className="muted small">
                {token.kind === 'proxy'
                  ? `proxy token for ${token.profile ?? 'a profile'}`
                  : token.scopes.join(', ')}{' '}
                · expires {formatWhen(token.expiresAt)} ·{' '}
                {token.lastUsedAt ? `used ${formatWhen(token.lastUsedAt)}` : 'never used'}
              </span>
            </span>
            <button type="button" className="button small-button ghost" onClick={() => void revoke(token)}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </section>
  )
}
