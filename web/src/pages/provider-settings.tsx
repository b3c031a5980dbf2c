// Provider credentials. The key field is write-only: the daemon never sends a key back, only whether one is
// set and its last four characters, so the field is always empty and says "configured ••••1234".
import { type FormEvent, useState } from 'react'
import { KNOWN_PROVIDERS } from '../../../src/core/provider-names'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import { formatWhen } from '../lib/format'
import type { ProviderSettings } from '../lib/types'
import { useResource } from '../lib/use-resource'

function ProviderRow({
  name,
  settings,
  onSaved,
}: {
  name: string
  settings: ProviderSettings | undefined
  onSaved: () => void
}) {
  const toast = useToast()
  const [apiKey, setApiKey] = useState('')
  const [model, setModel] = useState(settings?.model ?? '')
  const [baseUrl, setBaseUrl] = useState(settings?.baseUrl ?? '')
  const [saving, setSaving] = useState(false)
  const path = `/api/settings/providers/${encodeURIComponent(name)}`

  async function save(event: FormEvent) {
    event.preventDefault()
    setSaving(true)
    try {
      await api('PUT', path, {
        ...(apiKey && { apiKey }),
        model: model.trim() || null,
        baseUrl: baseUrl.trim() || null,
      })
      setApiKey('')
      toast.success(`Saved ${name}`)
      onSaved()
    } catch (error) {
      toast.error(error)
    } finally {
      setSaving(false)
    }
  }

  async function removeKey() {
    try {
      await api('PUT', path, { apiKey: null })
      toast.success(`Removed the ${name} key`)
      onSaved()
    } catch (error) {
      toast.error(error)
    }
  }

  return (
    <form
      className="provider-row"
      onSubmit={(event) => void save(event)}
      aria-label={`${name} settings`}
      data-provider={name}
    >
      <div className="provider-name">
        <strong>{name}</strong>
        <div className="small" data-testid="key-state">
          {settings?.keyConfigured ? (
            <span className="good">configured ••••{settings.keyLast4 ?? ''}</span>
          ) : (
            <span className="muted">no key stored</span>
          )}
        </div>
        {settings?.updatedAt && <div className="muted small">updated {formatWhen(settings.updatedAt)}</div>}
      </div>
      <label>
        <span className="small muted">API key</span>
        <input
          type="password"
          autoComplete="off"
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
          placeholder={settings?.keyConfigured ? 'enter a new key to replace it' : 'paste a key'}
        />
      </label>
      <label>
        <span className="small muted">Model</span>
        <input value={model} onChange={(event) => setModel(event.target.value)} placeholder="default" />
      </label>
      <label>
        <span className="small muted">Base URL</span>
        <input
          value={baseUrl}
          onChange={(event) => setBaseUrl(event.target.value)}
          placeholder="default"
          inputMode="url"
        />
      </label>
      <div className="row">
        <button type="submit" className="button primary" disabled={saving}>
          Save
        </button>
        {settings?.keyConfigured && (
          <button type="button" className="button ghost" onClick={() => void removeKey()}>
            Remove key
          </button>
        )}
      </div>
    </form>
  )
}

export function ProviderSettingsSection() {
  const providers = useResource<ProviderSettings[]>('/api/settings/providers')
  const [extra, setExtra] = useState<string[]>([])
  const [newName, setNewName] = useState('')
  const stored = new Map((providers.data ?? []).map((settings) => [settings.provider, settings]))
  const names = [...new Set([...KNOWN_PROVIDERS, ...stored.keys(), ...extra])]
  return (
    <section className="card" aria-labelledby="providers-heading">
      <h2 id="providers-heading">Provider credentials</h2>
      <p className="muted small">
        Keys are encrypted in the daemon's store and never shown again. Agents never see them: the proxy adds
        them to model requests.
      </p>
      {providers.data &&
        names.map((name) => (
          <ProviderRow
            key={`${name}:${stored.get(name)?.updatedAt ?? ''}`}
            name={name}
            settings={stored.get(name)}
            onSaved={() => void providers.reload()}
          />
        ))}
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault()
          if (newName.trim()) setExtra((current) => [...current, newName.trim()])
          setNewName('')
        }}
      >
        <label className="grow">
          <span className="visually-hidden">Another provider</span>
          <input
            value={newName}
            onChange={(event) => setNewName(event.target.value)}
            placeholder="another OpenAI-compatible provider (name)"
          />
        </label>
        <button type="submit" className="button">
          Add provider
        </button>
      </form>
    </section>
  )
}
