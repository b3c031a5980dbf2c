// How `hangar run` shows a run: the agent's text on stdout as it streams, everything else as short
// lines on stderr; or, with --json, one event envelope per line on stdout.
import { type EventEnvelope, isWarningEvent } from '../core/events.js'
import { describeRunCost, UNKNOWN_COST } from '../core/usage-cost.js'
import { type CliIo, cliDollars } from './output.js'
import { brief, toolCallSummary } from './tool-call-summary.js'

export function createRunPrinter(io: CliIo, options: { json: boolean }) {
  let midLine = false
  // Where the agent works: tool paths inside it are shown relative, as the agent's own CLI shows them.
  let cwd: string | undefined
  const note = (line: string) => {
    if (midLine) {
      io.stdout.write('\n')
      midLine = false
    }
    io.stderr.write(`${line}\n`)
  }
  return (envelope: EventEnvelope) => {
    if (options.json) {
      io.stdout.write(`${JSON.stringify(envelope)}\n`)
      return
    }
    switch (envelope.type) {
      case 'run-start':
        cwd = envelope.cwd
        note(
          `▶ ${envelope.agent} (${envelope.adapter}${envelope.model ? `, ${envelope.model}` : ''}) in ${envelope.cwd}`,
        )
        break
      case 'text-delta':
        io.stdout.write(envelope.text)
        midLine = !envelope.text.endsWith('\n')
        break
      case 'reasoning-delta':
        break
      case 'tool-call':
        note(`⏺ ${toolCallSummary(envelope.name, envelope.input, cwd)}`)
        break
      case 'tool-result':
        if (envelope.isError) note(`  ✗ ${brief(envelope.output)}`)
        break
      case 'file-change':
        note(`  ✎ ${envelope.kind} ${envelope.path}`)
        break
      case 'approval-required':
        note(
          `? ${envelope.summary} (${envelope.classification}) — decide with: hangar actions confirm|reject ${envelope.actionId}`,
        )
        break
      case 'error':
        note(`${envelope.retryable || isWarningEvent(envelope) ? 'warning' : 'error'}: ${envelope.message}`)
        break
      case 'workspace-setup-start':
        note(
          `⚙ workspace setup${envelope.target === 'local' ? '' : ` on ${envelope.target}`}: ${envelope.command}`,
        )
        break
      case 'workspace-setup-delta':
        // The setup's output goes to stderr: stdout is the agent's answer.
        if (midLine) {
          io.stdout.write('\n')
          midLine = false
        }
        io.stderr.write(envelope.text)
        break
      case 'workspace-setup-end':
        if (envelope.status === 'succeeded') note('⚙ workspace setup done')
        break
      case 'raw':
      case 'usage':
        break
      case 'run-end': {
        const cost = envelope.usage
          ? describeRunCost(envelope.usage.costUsd, envelope.usage.costSource, cliDollars)
          : ''
        const usage = envelope.usage
          ? ` · ${envelope.usage.inputTokens} in / ${envelope.usage.outputTokens} out tokens · ${cost === UNKNOWN_COST ? `cost ${cost}` : cost}`
          : ''
        const mark = envelope.status === 'succeeded' ? '✓' : '✗'
        note(
          `${mark} ${envelope.status}${envelope.reason ? `: ${envelope.reason}` : ''}${usage} (run ${envelope.runId})`,
        )
        break
      }
    }
  }
}
