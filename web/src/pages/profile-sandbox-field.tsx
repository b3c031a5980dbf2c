// The profile form's sandbox setting: whether the agent runs confined to its workspace with Hangar's proxy as
// its only way out (bubblewrap), and which extra hosts it may reach. A new profile starts sandboxed; a stored
// one that never chose keeps "the project's default" (what it had before sandboxes existed).
import type { ReactNode } from 'react'

/** '' = no `sandbox:` key: the project's default, else off. */
export type SandboxChoice = 'workspace' | 'off' | ''

export function ProfileSandboxField({
  choice,
  onChoice,
  hosts,
  onHosts,
  offerProjectDefault,
  problem,
  invalid,
}: {
  choice: SandboxChoice
  onChoice: (choice: SandboxChoice) => void
  hosts: string
  onHosts: (hosts: string) => void
  /** Only a stored profile without a setting offers it (new profiles choose). */
  offerProjectDefault: boolean
  problem: (key: string) => ReactNode
  invalid: (key: string) => Record<string, unknown>
}) {
  return (
    <div className="field">
      <label>
        Sandbox <span className="muted small">(what the agent can see and reach while it runs)</span>
        <select
          value={choice}
          onChange={(event) => onChoice(event.target.value as SandboxChoice)}
          {...invalid('sandbox')}
        >
          <option value="workspace">
            workspace: its workspace only, and Hangar&apos;s proxy as the only way out
          </option>
          <option value="off">off: the daemon user&apos;s files and network</option>
          {offerProjectDefault && (
            <option value="">the project&apos;s default (off unless hangar.yaml says)</option>
          )}
        </select>
      </label>
      {problem('sandbox')}
      {choice !== 'off' && (
        <label>
          Allowed hosts{' '}
          <span className="muted small">
            (e.g. registry.npmjs.org, one per line; everything else is refused)
          </span>
          <textarea
            rows={2}
            value={hosts}
            onChange={(event) => onHosts(event.target.value)}
            {...invalid('sandboxHosts')}
          />
        </label>
      )}
      {problem('sandboxHosts')}
    </div>
  )
}
