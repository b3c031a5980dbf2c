// Create or edit a profile made in the UI: adapter, model, skills, feeds, target, budget, run limits,
// auto-approval, permissions.
// The daemon checks it with the same schema and cross-reference checks as hangar.yaml; each problem it
// names by key path (details.fields) is shown next to that input, the rest under the form.
import { type FormEvent, useState } from 'react'
import { WRITE_CLASSIFICATIONS } from '../../../src/core/events'
import {
  PERMISSION_MODE_MEANINGS,
  PERMISSION_MODES,
  type PermissionMode,
} from '../../../src/core/permissions'
import { useToast } from '../components/toasts'
import { api, ApiError } from '../lib/api'
import { fieldErrorsByKey, unplacedErrors } from '../lib/field-errors'
import type { AdapterInfo, Profile, ProfileDefinition } from '../lib/types'
import { ProfileSandboxField, type SandboxChoice } from './profile-sandbox-field'

interface FeedRow {
  name: string
  source: string
  path: string
  ttl: string
}

/** The keys this form edits; any other key of a stored profile (proxy, sandboxPaths, …) is kept as it is. */
const FORM_KEYS = new Set([
  'adapter',
  'model',
  'provider',
  'skills',
  'target',
  'budget',
  'timeout',
  'idleTimeout',
  'cliArgs',
  'autoApprove',
  'permissions',
  'feeds',
  'sandbox',
  'sandboxHosts',
])

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
  const [timeout, setTimeoutText] = useState(existing?.timeout ?? '')
  const [idleTimeout, setIdleTimeout] = useState(existing?.idleTimeout ?? '')
  const [autoApprove, setAutoApprove] = useState<string[]>(existing?.autoApprove ?? [])
  // '' = no `permissions:` (the adapter's default mode).
  const [permissionMode, setPermissionMode] = useState<PermissionMode | ''>(existing?.permissions?.mode ?? '')
  const [allowedTools, setAllowedTools] = useState((existing?.permissions?.allowedTools ?? []).join('\n'))
  const [deniedTools, setDeniedTools] = useState((existing?.permissions?.deniedTools ?? []).join('\n'))
  const [sandbox, setSandbox] = useState<SandboxChoice>(profile ? (existing?.sandbox ?? '') : 'workspace')
  const [sandboxHosts, setSandboxHosts] = useState((existing?.sandboxHosts ?? []).join('\n'))
  const adapterInfo = adapters.find((item) => item.id === adapter)
  const [feeds, setFeeds] = useState<FeedRow[]>(
    (existing?.feeds ?? []).map((feed) => ({
      name: feed.name ?? '',
      source: feed.source,
      path: feed.path,
      ttl: String(feed.ttl),
    })),
  )
  const [saving, setSaving] = useState(false)
  /** The daemon's refusal by form key (`target`, `feeds[0].source`). */
  // A stored profile a later hangar.yaml left behind opens with its problems already shown.
  const [errors, setErrors] = useState<Record<string, string>>(() => fieldErrorsByKey(profile?.issues))
  /** Keys that have an input below; any other key's error is listed under the form. */
  const placed = new Set([
    'name',
    'adapter',
    'model',
    'provider',
    'target',
    'skills',
    'cliArgs',
    'budget.usd',
    'budget.window',
    'timeout',
    'idleTimeout',
    'autoApprove',
    'permissions',
    'permissions.mode',
    'permissions.allowedTools',
    'permissions.deniedTools',
    'sandbox',
    'sandboxHosts',
    // A refused extra flag (one that fights the permission flags) is shown under the flags.
    ...Object.keys(errors).filter((key) => key.startsWith('cliArgs[')),
    ...feeds.flatMap((_, index) => ['name', 'source', 'path', 'ttl'].map((key) => `feeds[${index}].${key}`)),
  ])
  const problem = (key: string) =>
    errors[key] ? (
      <span className="field-error" role="alert" data-field={key} id={`field-error-${key}`}>
        {errors[key]}
      </span>
    ) : null
  const invalid = (key: string) =>
    errors[key] ? { 'aria-invalid': true, 'aria-describedby': `field-error-${key}` } : {}

  function definition(): Partial<ProfileDefinition> {
    const kept = Object.fromEntries(Object.entries(existing ?? {}).filter(([key]) => !FORM_KEYS.has(key)))
    return {
      ...kept,
      adapter: adapter as ProfileDefinition['adapter'],
      ...(model.trim() && { model: model.trim() }),
      ...(adapter === 'builtin' && provider.trim() && { provider: provider.trim() }),
      ...(lines(skills).length > 0 && { skills: lines(skills) }),
      ...(target.trim() && { target: target.trim() }),
      ...(budgetUsd.trim() && { budget: { usd: Number(budgetUsd), window: budgetWindow.trim() } }),
      ...(timeout.trim() && { timeout: timeout.trim() }),
      ...(idleTimeout.trim() && { idleTimeout: idleTimeout.trim() }),
      ...(cliArgs.trim() && {
        cliArgs: cliArgs
          .split('\n')
          .map((arg) => arg.trim())
          .filter(Boolean),
      }),
      ...(autoApprove.length > 0 && { autoApprove: autoApprove as ProfileDefinition['autoApprove'] }),
      ...(sandbox && { sandbox }),
      ...(sandbox !== 'off' && lines(sandboxHosts).length > 0 && { sandboxHosts: lines(sandboxHosts) }),
      ...(adapter !== 'builtin' &&
        (permissionMode || lines(allowedTools).length > 0 || lines(deniedTools).length > 0) && {
          permissions: {
            mode: permissionMode || 'workspace',
            ...(lines(allowedTools).length > 0 && { allowedTools: lines(allowedTools) }),
            ...(lines(deniedTools).length > 0 && { deniedTools: lines(deniedTools) }),
          },
        }),
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
    setErrors({})
    try {
      if (profile) await api('PUT', `/api/profiles/${encodeURIComponent(profile.name)}`, definition())
      else await api('POST', '/api/profiles', { name: name.trim(), definition: definition() })
      toast.success(`Saved ${profile?.name ?? name.trim()}`)
      onDone()
    } catch (error) {
      if (error instanceof ApiError && error.fields.length > 0) setErrors(fieldErrorsByKey(error.fields))
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
        <div className="field">
          <label>
            Name
            <input
              value={name}
              onChange={(event) => setName(event.target.value)}
              {...invalid('name')}
              required
              disabled={profile !== undefined}
              pattern="[a-zA-Z0-9][a-zA-Z0-9._\-]{0,63}"
              title="Letters, digits, '.', '_' or '-'"
            />
          </label>
          {problem('name')}
        </div>
        <div className="field">
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
          {problem('adapter')}
        </div>
        <div className="field">
          <label>
            Model <span className="muted small">(optional)</span>
            <input
              value={model}
              onChange={(event) => setModel(event.target.value)}
              placeholder="the agent's default"
            />
          </label>
          {problem('model')}
        </div>
        {adapter === 'builtin' && (
          <div className="field">
            <label>
              Provider
              <input
                value={provider}
                onChange={(event) => setProvider(event.target.value)}
                {...invalid('provider')}
                placeholder="anthropic, openai, openrouter, ollama…"
              />
            </label>
            {problem('provider')}
          </div>
        )}
        <div className="field">
          <label>
            Target <span className="muted small">(an SSH target of hangar.yaml; empty = this machine)</span>
            <input
              value={target}
              onChange={(event) => setTarget(event.target.value)}
              {...invalid('target')}
            />
          </label>
          {problem('target')}
        </div>
        <div className="field">
          <label>
            Skills <span className="muted small">(one folder per line)</span>
            <textarea rows={2} value={skills} onChange={(event) => setSkills(event.target.value)} />
          </label>
          {problem('skills')}
        </div>
        {adapter !== 'builtin' && (
          <div className="field">
            <label>
              Extra CLI flags <span className="muted small">(one per line, passed as they are)</span>
              <textarea rows={2} value={cliArgs} onChange={(event) => setCliArgs(event.target.value)} />
            </label>
            {problem('cliArgs')}
            {Object.keys(errors)
              .filter((key) => key.startsWith('cliArgs['))
              .map((key) => problem(key))}
          </div>
        )}
        {adapter !== 'builtin' && (
          <div className="field">
            <label>
              Permissions{' '}
              <span className="muted small">(runs cannot answer prompts: what it may do without asking)</span>
              <select
                value={permissionMode}
                onChange={(event) => setPermissionMode(event.target.value as PermissionMode | '')}
                {...invalid('permissions.mode')}
              >
                <option value="">default (workspace)</option>
                {PERMISSION_MODES.map((mode) => (
                  <option key={mode} value={mode}>
                    {mode}: {PERMISSION_MODE_MEANINGS[mode]}
                  </option>
                ))}
              </select>
            </label>
            {adapterInfo?.permissions && (
              <span className="muted small" data-testid="permission-mapping">
                {adapterInfo.displayName}: {adapterInfo.permissions.modes[permissionMode || 'workspace']}
              </span>
            )}
            {problem('permissions')}
            {problem('permissions.mode')}
          </div>
        )}
        {adapter !== 'builtin' && (
          <div className="field">
            <label>
              Allowed tools{' '}
              <span className="muted small">(the CLI's own tool ids or patterns, one per line)</span>
              <textarea
                rows={2}
                value={allowedTools}
                onChange={(event) => setAllowedTools(event.target.value)}
                {...invalid('permissions.allowedTools')}
              />
            </label>
            {problem('permissions.allowedTools')}
            <label>
              Denied tools
              <textarea
                rows={2}
                value={deniedTools}
                onChange={(event) => setDeniedTools(event.target.value)}
                {...invalid('permissions.deniedTools')}
              />
            </label>
            {problem('permissions.deniedTools')}
          </div>
        )}
        <div className="field">
          <label>
            Budget in USD <span className="muted small">(optional)</span>
            <input
              inputMode="decimal"
              value={budgetUsd}
              onChange={(event) => setBudgetUsd(event.target.value)}
            />
          </label>
          {problem('budget.usd')}
        </div>
        <div className="field">
          <label>
            Budget window
            <input
              value={budgetWindow}
              onChange={(event) => setBudgetWindow(event.target.value)}
              placeholder="12h, 1d, 1w"
            />
          </label>
          {problem('budget.window')}
        </div>
        <div className="field">
          <label>
            Time limit <span className="muted small">(a run is stopped after this long; default 60m)</span>
            <input
              value={timeout}
              onChange={(event) => setTimeoutText(event.target.value)}
              {...invalid('timeout')}
              placeholder="90s, 30m, 2h or off"
            />
          </label>
          {problem('timeout')}
        </div>
        <div className="field">
          <label>
            Idle limit{' '}
            <span className="muted small">
              (stopped after this long without output or model traffic; default 15m)
            </span>
            <input
              value={idleTimeout}
              onChange={(event) => setIdleTimeout(event.target.value)}
              {...invalid('idleTimeout')}
              placeholder="90s, 30m, 2h or off"
            />
          </label>
          {problem('idleTimeout')}
        </div>
      </div>
      <ProfileSandboxField
        choice={sandbox}
        onChoice={setSandbox}
        hosts={sandboxHosts}
        onHosts={setSandboxHosts}
        offerProjectDefault={profile !== undefined && existing?.sandbox === undefined}
        problem={problem}
        invalid={invalid}
      />
      <fieldset>
        <legend>Apply without asking</legend>
        {problem('autoApprove')}
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
              {...invalid(`feeds[${index}].name`)}
            />
            <input
              aria-label="Feed source"
              placeholder="service"
              value={feed.source}
              onChange={(event) => setFeed(index, { source: event.target.value })}
              {...invalid(`feeds[${index}].source`)}
              required
            />
            <input
              aria-label="Feed path"
              placeholder="/path/{agent}"
              value={feed.path}
              onChange={(event) => setFeed(index, { path: event.target.value })}
              {...invalid(`feeds[${index}].path`)}
              required
            />
            <input
              aria-label="Feed TTL in seconds"
              placeholder="ttl s"
              inputMode="numeric"
              value={feed.ttl}
              onChange={(event) => setFeed(index, { ttl: event.target.value })}
              {...invalid(`feeds[${index}].ttl`)}
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
            {(['name', 'source', 'path', 'ttl'] as const).map((key) => (
              <span key={key} className="feed-row-error">
                {problem(`feeds[${index}].${key}`)}
              </span>
            ))}
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
      {unplacedErrors(errors, placed).map((message) => (
        <p key={message} className="field-error" role="alert">
          {message}
        </p>
      ))}
      {profile?.issues
        ?.filter((issue) => issue.severity === 'warning')
        .map((issue) => (
          <p key={issue.message} className="field-warning" role="note">
            Warning: {issue.message}
          </p>
        ))}
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
