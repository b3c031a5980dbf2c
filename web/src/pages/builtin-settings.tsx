// The built-in agent's provider: what it will use with no profile naming one, and why ("your default",
// "operator default …", "ANTHROPIC_API_KEY in the daemon's environment"), and the user's own default.
// The daemon decides (one precedence: profile → your default → operator default → environment).
import { type FormEvent, useState } from 'react'
import { KNOWN_PROVIDERS } from '../../../src/core/provider-names'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import type { BuiltinSettings, ProviderSettings } from '../lib/types'
import { useResource } from '../lib/use-resource'

function BuiltinForm({
  settings,
  providers,
  onSaved,
}: {
  settings: BuiltinSettings
  providers: string[]
  onSaved: (next: BuiltinSettings) => void
}) {
  const toast = useToast()
  const [provider, setProvider] = useState(settings.provider ?? '')
  const [model, setModel] = useState(settings.model ?? '')
  const [saving, setSaving] = useState(false)

  async function save(event: FormEvent) {
    event.preventDefault()
    setSaving(true)
    try {
      const next = await api<BuiltinSettings>('PUT', '/api/settings/builtin', {
        provider: provider || null,
        ...(provider && { model: model.trim() || null }),
      })
      toast.success(provider ? `The built-in agent now defaults to ${provider}` : 'Default cleared')
      onSaved(next)
    } catch (error) {
      toast.error(error)
    } finally {
      setSaving(false)
    }
  }

  return (
    <form className="row" onSubmit={(event) => void save(event)} aria-label="Built-in agent default">
      <label>
        <span className="small muted">Default provider</span>
        <select value={provider} onChange={(event) => setProvider(event.target.value)}>
          <option value="">(none: operator default or environment)</option>
          {providers.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span className="small muted">Default model</span>
        <input
          value={model}
          onChange={(event) => setModel(event.target.value)}
          placeholder="the provider's"
          disabled={!provider}
        />
      </label>
      <button type="submit" className="button primary" disabled={saving}>
        Save default
      </button>
    </form>
  )
}

export function BuiltinSettingsSection() {
  const builtin = useResource<BuiltinSettings>('/api/settings/builtin')
  const stored = useResource<ProviderSettings[]>('/api/settings/providers')
  const [saved, setSaved] = useState<BuiltinSettings>()
  const settings = saved ?? builtin.data
  const providers = [...new Set([...KNOWN_PROVIDERS, ...(stored.data ?? []).map((entry) => entry.provider)])]
  return (
    <section className="card" aria-labelledby="builtin-heading">
      <h2 id="builtin-heading">Built-in agent</h2>
      {settings && (
        <>
          <p data-testid="builtin-effective">
            {settings.effective ? (
              <>
                Uses <strong>{settings.effective.provider}</strong> / <code>{settings.effective.model}</code>{' '}
                <span className="muted">— {settings.effective.reason}</span>
              </>
            ) : (
              <span className="bad">{settings.problem ?? 'no model provider'}</span>
            )}
          </p>
          <p className="muted small">
            A profile that names a provider wins; then your default; then the operator's default; then the
            daemon's environment. A keyless local provider (Ollama) needs its base URL in the provider
            settings.
          </p>
          <BuiltinForm
            key={`${settings.provider ?? ''}:${settings.model ?? ''}`}
            settings={settings}
            providers={providers}
            onSaved={setSaved}
          />
        </>
      )}
    </section>
  )
}
