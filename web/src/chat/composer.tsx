// The message box: Enter sends, Shift+Enter adds a line. The agent picker sits beside it; switching agent
// applies to the next message (never to a run under way).
import { type FormEvent, type KeyboardEvent, useState } from 'react'
import type { AgentChoice } from '../lib/use-agents'
import { AgentPicker } from './agent-picker'

export function Composer({
  choices,
  agent,
  onAgentChange,
  onSend,
  busy,
  placeholder,
  agentProblem,
}: {
  choices: AgentChoice[]
  agent: string
  onAgentChange: (name: string) => void
  onSend: (text: string) => Promise<boolean>
  /** A run is under way: sending would be refused, so the box waits. */
  busy: boolean
  placeholder?: string
  /** Why no agent can run and how to fix it (the picker shows it when `agent` names none). */
  agentProblem?: string | undefined
}) {
  const [text, setText] = useState('')
  const [sending, setSending] = useState(false)

  async function submit(event?: FormEvent) {
    event?.preventDefault()
    const message = text.trim()
    if (!message || sending || busy) return
    setSending(true)
    const sent = await onSend(message)
    setSending(false)
    if (sent) setText('')
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      void submit()
    }
  }

  return (
    <form className="composer" onSubmit={(event) => void submit(event)}>
      <AgentPicker
        choices={choices}
        value={agent}
        onChange={onAgentChange}
        disabled={sending}
        problem={agentProblem}
      />
      <div className="composer-row">
        <label className="grow">
          <span className="visually-hidden">Message</span>
          <textarea
            value={text}
            onChange={(event) => setText(event.target.value)}
            onKeyDown={onKeyDown}
            placeholder={placeholder ?? 'Ask the agent… (Enter to send, Shift+Enter for a new line)'}
            rows={3}
          />
        </label>
        <button type="submit" className="button primary" disabled={sending || busy || !text.trim()}>
          {busy ? 'Working…' : 'Send'}
        </button>
      </div>
    </form>
  )
}
