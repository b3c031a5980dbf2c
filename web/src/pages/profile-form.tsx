// Create or edit a profile made in the UI: adapter, model, skills, feeds, target, budget, auto-approval.
// The daemon checks it with the same schema as hangar.yaml and its message says what is wrong.
import { type FormEvent, useState } from 'react'
import { WRITE_CLASSIFICATIONS } from '../../../src/core/events'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import type { AdapterInfo, Profile, ProfileDefinition } from '../lib/types'

interface FeedRow {
  name: string
  source: string
  path: string
  ttl: string
}

const lines = (text: string) =>
  text
    .split(/[\n,]/)
    .map((line) => line.trim())
    .filter(Boolean)

export function ProfileForm({
  profile,
  adapters,
  onDone,
  onCancel,
}: {
  profile: Profile | undefined
  adapters: AdapterInfo[]
  onDone: () => void
  onCancel: () => void
}) {
  const toast = useToast()
  const existing = profile?.definition
  const [name, setName] = useState(profile?.name ?? '')
  const [adapter, setAdapter] = useState<string>(existing?.adapter ?? adapters[0]?.id ?? 'builtin')
  const [model, setModel] = useState(existing?.model ?? '')
  const [provider, setProvider] = useState(existing?.provider ?? '')
  const [skills, setSkills] = useState((existing?.skills ?? []).join('\n'))
  const [target, setTarget] = useState(existing?.target ?? '')
  const [budgetUsd, setBudgetUsd] = useState(existing?.budget ? String(existing.budget.usd) : '')
  const [budgetWindow, setBudgetWindow] = useState(existing?.budget?.window ?? '1d')
  const [cliArgs, setCliArgs] = useState((existing?.cliArgs ?? []).join('\n'))
  const [autoApprove, setAutoApprove] = useState<string[]>(existing?.autoApprove ?? [])
  const [feeds, setFeeds] = useState<FeedRow[]>(
    (existing?.feeds ?? []).map((feed) => ({
      name: feed.name ?? '',
      source: feed.source,
      path: feed.path,
      ttl: String(feed.ttl),
    })),
  )
  const [saving, setSaving] = useState(false)

  function definition(): Partial<ProfileDefinition> {
    return {
      adapter: adapter as ProfileDefinition['adapter'],
      ...(model.trim() && { model: model.trim() }),
      ...(adapter === 'builtin' && provider.trim() && { provider: provider.trim() }),
      ...(lines(skills).length > 0 && { skills: lines(skills) }),
      ...(target.trim() && { target: target.trim() }),
      ...(budgetUsd.trim() && { budget: { usd: Number(budgetUsd), window: budgetWindow.trim() } }),
      ...(cliArgs.trim() && {
        cliArgs: cliArgs
          .split('\n')
          .map((arg) => arg.trim())
          .filter(Boolean),
      }),
      ...(autoApprove.length > 0 && { autoApprove: autoApprove as ProfileDefinition['autoApprove'] }),
      ...(feeds.length > 0 && {
        feeds: feeds.map((feed) => ({
          ...(feed.name.trim() && { name: feed.name.trim() }),
          source: feed.source.trim(),
          path: feed.path.trim(),
          ttl: Number(feed.ttl),
        })),
      }),
    }
  }

  async function save(event: FormEvent) {
    event.preventDefault()
    setSaving(true)
    try {
      if (profile) await api('PUT', `/api/profiles/${encodeURIComponent(profile.name)}`, definition())
      else await api('POST', '/api/profiles', { name: name.trim(), definition: definition() })
      toast.success(`Saved ${profile?.name ?? name.trim()}`)
      onDone()
    } catch (error) {
      toast.error(error)
    } finally {
      setSaving(false)
    }
  }

  const setFeed = (index: number, change: Partial<FeedRow>) =>
    setFeeds((rows) => rows.map((row, at) => (at === index ? { ...row, ...change } : row)))

  return (
    <form
      className="card form"
      onSubmit={(event) => void save(event)}
      aria-label={profile ? `Edit ${profile.name}` : 'New profile'}
    >
      <div className="grid-2">
        <label>
          Name
          <input
            value={name}
            onChange={(event) => setName(event.target.value)}
            required
            disabled={profile !== undefined}
            pattern="[a-zA-Z0-9][a-zA-Z0-9._\-]{0,63}"
            title="Letters, digits, '.', '_' or '-'"
          />
        </label>
        <label>
          Adapter
          <select value={adapter} onChange={(event) => setAdapter(event.target.value)}>
            {adapters.map((item) => (
              <option key={item.id} value={item.id}>
                {item.displayName}
              </option>
            ))}
          </select>
        </label>
        <label>
          Model <span className="muted small">(optional)</span>
          <input
            value={model}
            onChange={(event) => setModel(event.target.value)}
            placeholder="the agent's default"
          />
        </label>
        {adapter === 'builtin' && (
          <label>
            Provider
            <input
              value={provider}
              onChange={(event) => setProvider(event.target.value)}
              placeholder="anthropic, openai, openrouter, ollama…"
            />
          </label>
        )}
        <label>
          Target <span className="muted small">(an SSH target of hangar.yaml; empty = this machine)</span>
          <input value={target} onChange={(event) => setTarget(event.target.value)} />
        </label>
        <label>
          Skills <span className="muted small">(one folder per line)</span>
          <textarea rows={2} value={skills} onChange={(event) => setSkills(event.target.value)} />
        </label>
        {adapter !== 'builtin' && (
          <label>
            Extra CLI flags <span className="muted small">(one per line, passed as they are)</span>
            <textarea rows={2} value={cliArgs} onChange={(event) => setCliArgs(event.target.value)} />
          </label>
        )}
        <label>
          Budget in USD <span className="muted small">(optional)</span>
          <input
            inputMode="decimal"
            value={budgetUsd}
            onChange={(event) => setBudgetUsd(event.target.value)}
          />
        </label>
        <label>
          Budget window
          <input
            value={budgetWindow}
            onChange={(event) => setBudgetWindow(event.target.value)}
            placeholder="12h, 1d, 1w"
          />
        </label>
      </div>
      <fieldset>
        <legend>Apply without asking</legend>
        {WRITE_CLASSIFICATIONS.map((classification) => (
          <label key={classification} className="check">
            <input
              type="checkbox"
              checked={autoApprove.includes(classification)}
              onChange={(event) =>
                setAutoApprove((current) =>
                  event.target.checked
                    ? [...current, classification]
                    : current.filter((item) => item !== classification),
                )
              }
            />
            {classification.replace('_', ' ')}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Feeds</legend>
        {feeds.map((feed, index) => (
          <div key={index} className="feed-row">
            <input
              aria-label="Feed name"
              placeholder="name (optional)"
              value={feed.name}
              onChange={(event) => setFeed(index, { name: event.target.value })}
            />
            <input
              aria-label="Feed source"
              placeholder="service"
              value={feed.source}
              onChange={(event) => setFeed(index, { source: event.target.value })}
              required
            />
            <input
              aria-label="Feed path"
              placeholder="/path/{agent}"
              value={feed.path}
              onChange={(event) => setFeed(index, { path: event.target.value })}
              required
            />
            <input
              aria-label="Feed TTL in seconds"
              placeholder="ttl s"
              inputMode="numeric"
              value={feed.ttl}
              onChange={(event) => setFeed(index, { ttl: event.target.value })}
              required
            />
            <button
              type="button"
              className="button ghost"
              aria-label="Remove feed"
              onClick={() => setFeeds((rows) => rows.filter((_, at) => at !== index))}
            >
              ×
            </button>
          </div>
        ))}
        <button
          type="button"
          className="button small-button"
          onClick={() => setFeeds((rows) => [...rows, { name: '', source: '', path: '/', ttl: '300' }])}
        >
          Add feed
        </button>
      </fieldset>
      <div className="row">
        <button type="submit" className="button primary" disabled={saving}>
          {saving ? 'Saving…' : 'Save profile'}
        </button>
        <button type="button" className="button ghost" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
