// Agents: every adapter with what detection found (installed, version, sign-in) and how to fix what is
// missing; their capabilities; and the profiles — from hangar.yaml (edit the file) or made here.
import { useState } from 'react'
import { featuresOf } from '../chat/agent-picker'
import { useToast } from '../components/toasts'
import { api } from '../lib/api'
import type { AdapterInfo, Profile } from '../lib/types'
import { adapterProblem, useAgents } from '../lib/use-agents'
import { ProfileForm } from './profile-form'

function AdapterRow({ adapter }: { adapter: AdapterInfo }) {
  const problem = adapterProblem(adapter)
  const hint = adapter.auth?.state !== 'ok' ? adapter.auth?.hint : undefined
  const features = featuresOf({
    name: adapter.id,
    label: adapter.displayName,
    adapter,
    capabilities: adapter.capabilities,
    unavailable: problem,
    fix: undefined,
    kind: 'adapter',
  })
  return (
    <tr data-adapter={adapter.id}>
      <td>
        <strong>{adapter.displayName}</strong>
        <div className="muted small">
          <code>{adapter.id}</code>
          {!adapter.verified && ' · unverified against the real CLI'}
        </div>
      </td>
      <td>
        {problem ? (
          <span className="badge badge-bad">{problem}</span>
        ) : (
          <span className="badge badge-good">ready</span>
        )}
        {adapter.version && <div className="muted small">{adapter.version}</div>}
        {adapter.versionWarning && (
          <div>
            <span className="badge badge-warn" title={adapter.versionWarning}>
              untested version
            </span>
          </div>
        )}
        {adapter.testedVersions && <div className="muted small">tested with {adapter.testedVersions}</div>}
      </td>
      <td>
        {adapter.id === 'builtin' ? 'provider key' : (adapter.auth?.state ?? 'unknown')}
        {adapter.auth?.source && <div className="muted small">{adapter.auth.source}</div>}
      </td>
      <td className="hint-cell">
        {!adapter.installed && adapter.id !== 'builtin' && !adapter.problem && (
          <div>
            Install {adapter.displayName} and put it on the daemon's PATH (or set{' '}
            <code>adapters.{adapter.id}.path</code> in hangar.yaml), then refresh.
          </div>
        )}
        {adapter.problem && adapter.id !== 'builtin' && <div>{adapter.problem}</div>}
        {adapter.versionWarning && (
          <div>{adapter.versionWarning}: a run whose output Hangar cannot read says so in its events.</div>
        )}
        {hint && <div>{hint}</div>}
      </td>
      <td>
        <ul className="features">
          {features.map((feature) => (
            <li
              key={feature.label}
              className={feature.on ? 'feature' : 'feature feature-off'}
              title={feature.why}
            >
              {feature.label}
            </li>
          ))}
        </ul>
        {adapter.permissions && (
          <div
            className="muted small"
            data-testid="permission-default"
            title={adapter.permissions.modes.workspace}
          >
            {adapter.id === 'builtin'
              ? 'permissions: each write is confirmed (autoApprove)'
              : `permissions: ${adapter.permissions.default} by default (${adapter.permissions.modes[adapter.permissions.default]})`}
          </div>
        )}
      </td>
    </tr>
  )
}

export function AgentsPage() {
  const toast = useToast()
  const { adapters, profiles, sandbox, reload, refresh: detectAgain, loading } = useAgents()
  const [editing, setEditing] = useState<Profile | 'new' | null>(null)
  const [refreshing, setRefreshing] = useState(false)

  async function refresh() {
    setRefreshing(true)
    try {
      await detectAgain()
    } catch (error) {
      toast.error(error)
    } finally {
      setRefreshing(false)
    }
  }

  async function remove(profile: Profile) {
    if (!window.confirm(`Delete profile "${profile.name}"?`)) return
    try {
      await api('DELETE', `/api/profiles/${encodeURIComponent(profile.name)}`)
      toast.success(`Deleted ${profile.name}`)
      await reload()
    } catch (error) {
      toast.error(error)
    }
  }

  return (
    <div className="page">
      <header className="page-head">
        <h1>Agents</h1>
        <span className="grow" />
        <button type="button" className="button" onClick={() => void refresh()} disabled={refreshing}>
          {refreshing ? 'Checking…' : 'Refresh'}
        </button>
      </header>
      <div className="table-wrap">
        <table className="table" aria-label="Adapters">
          <thead>
            <tr>
              <th>Agent</th>
              <th>Status</th>
              <th>Sign-in</th>
              <th>How to fix</th>
              <th>Capabilities</th>
            </tr>
          </thead>
          <tbody>
            {adapters.map((adapter) => (
              <AdapterRow key={adapter.id} adapter={adapter} />
            ))}
          </tbody>
        </table>
      </div>
      {loading && adapters.length === 0 && <p className="muted">Looking for agent CLIs…</p>}

      <header className="page-head section-head">
        <h2>Profiles</h2>
        <span className="grow" />
        <button type="button" className="button primary" onClick={() => setEditing('new')}>
          New profile
        </button>
      </header>
      {editing && (
        <ProfileForm
          profile={editing === 'new' ? undefined : editing}
          adapters={adapters}
          onDone={() => {
            setEditing(null)
            void reload()
          }}
          onCancel={() => setEditing(null)}
        />
      )}
      {sandbox && (
        <p className={sandbox.available ? 'muted small' : 'field-warning'} data-testid="sandbox-status">
          {sandbox.available
            ? `Sandbox: ${sandbox.by ?? 'bubblewrap'} confines the runs of profiles with sandbox: workspace.`
            : `Sandbox unavailable: ${sandbox.reason ?? 'bubblewrap cannot run here'}. Sandboxed profiles' runs fail until it works.`}
        </p>
      )}
      {profiles.length === 0 && <p className="empty">No profiles yet: a bare agent name works too.</p>}
      <ul className="list" aria-label="Profiles">
        {profiles.map((profile) => (
          <li key={profile.name} className="list-item" data-profile={profile.name}>
            <span className="grow">
              <span className="list-title">{profile.name}</span>
              <span className="muted small">
                {profile.definition.adapter}
                {profile.definition.model && ` · ${profile.definition.model}`}
                {profile.definition.target && ` · on ${profile.definition.target}`}
                {profile.definition.skills?.length ? ` · ${profile.definition.skills.length} skill(s)` : ''}
                {profile.definition.feeds?.length ? ` · ${profile.definition.feeds.length} feed(s)` : ''}
                {profile.definition.budget &&
                  ` · budget $${profile.definition.budget.usd}/${profile.definition.budget.window}`}
                {profile.sandboxMode && (
                  <span data-testid="profile-sandbox">
                    {profile.sandboxMode === 'workspace' ? ' · sandboxed' : ' · not sandboxed'}
                  </span>
                )}
              </span>
              {profile.issues?.map((issue) =>
                issue.severity === 'warning' ? (
                  <span key={`${issue.path}:${issue.message}`} className="field-warning" role="note">
                    Warning: {issue.path ? `${issue.path}: ` : ''}
                    {issue.message}
                  </span>
                ) : (
                  <span key={`${issue.path}:${issue.message}`} className="field-error" role="alert">
                    {issue.path ? `${issue.path}: ` : ''}
                    {issue.message}
                  </span>
                ),
              )}
            </span>
            {profile.source === 'config' ? (
              <span className="muted small" title="Edit hangar.yaml to change it">
                hangar.yaml
              </span>
            ) : (
              <>
                <button type="button" className="button small-button" onClick={() => setEditing(profile)}>
                  Edit
                </button>
                <button
                  type="button"
                  className="button small-button ghost"
                  onClick={() => void remove(profile)}
                >
                  Delete
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  )
}
