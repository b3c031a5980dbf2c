// Which agent answers the next message. What the chat offers follows the adapter's capabilities: an agent
// that cannot resume or stream says so next to the picker, with the reason on hover and focus. An agent that
// cannot run says why and how to fix it (the built-in agent: "needs a provider"), and so does the picker
// when no agent can run at all.
import { useId } from 'react'
import type { AgentChoice } from '../lib/use-agents'

interface Feature {
  label: string
  on: boolean
  why: string
}

export function featuresOf(choice: AgentChoice | undefined): Feature[] {
  const capabilities = choice?.capabilities
  if (!capabilities) return []
  const name = choice.adapter?.displayName ?? choice.name
  return [
    {
      label: capabilities.resume ? 'resumes its session' : 'no resume',
      on: capabilities.resume,
      why: capabilities.resume
        ? `${name} continues the same session on each message of this conversation.`
        : `${name} cannot resume a session: each message starts a fresh session that does not see the earlier ones.`,
    },
    {
      label: capabilities.streaming ? 'streams live' : 'no live stream',
      on: capabilities.streaming,
      why: capabilities.streaming
        ? `${name} sends its reply as it writes it.`
        : `${name} prints nothing until it finishes: its reply appears when the run ends.`,
    },
    {
      label: capabilities.surgicalEdit ? 'surgical edits' : 'whole-file writes',
      on: capabilities.surgicalEdit,
      why: capabilities.surgicalEdit
        ? `${name} edits parts of files.`
        : `${name} rewrites whole files when it changes them.`,
    },
  ]
}

export function AgentPicker({
  choices,
  value,
  onChange,
  disabled,
  problem,
}: {
  choices: AgentChoice[]
  /** Empty when no agent can run. */
  value: string
  onChange: (name: string) => void
  disabled?: boolean
  /** Why no agent can run and how to fix it (shown when `value` names none). */
  problem?: string | undefined
}) {
  const id = useId()
  const selected = choices.find((choice) => choice.name === value)
  const profiles = choices.filter((choice) => choice.kind === 'profile')
  const adapters = choices.filter((choice) => choice.kind === 'adapter')
  const option = (choice: AgentChoice) => (
    <option key={choice.name} value={choice.name} disabled={choice.unavailable !== undefined}>
      {choice.label}
      {choice.unavailable ? ` — ${choice.unavailable}` : ''}
    </option>
  )
  return (
    <div className="agent-picker">
      <label htmlFor={id} className="small muted">
        Agent
      </label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)} disabled={disabled}>
        {!selected && (
          <option value={value}>{value || (problem ? '(no agent can run)' : '(the default agent)')}</option>
        )}
        {profiles.length > 0 && <optgroup label="Profiles">{profiles.map(option)}</optgroup>}
        <optgroup label="Agents">{adapters.map(option)}</optgroup>
      </select>
      <ul className="features" aria-label="Capabilities">
        {featuresOf(selected).map((feature) => (
          <li
            key={feature.label}
            className={feature.on ? 'feature' : 'feature feature-off'}
            title={feature.why}
            tabIndex={0}
          >
            {feature.label}
          </li>
        ))}
      </ul>
      {selected?.unavailable && (
        <p className="agent-fix small" role="note">
          {selected.label}: {selected.unavailable}
          {selected.fix ? `. ${selected.fix}` : ''}
        </p>
      )}
      {!selected && problem && (
        <p className="agent-fix small" role="note">
          {problem}
        </p>
      )}
    </div>
  )
}
