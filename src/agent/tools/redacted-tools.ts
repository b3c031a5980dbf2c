// Tools whose every output is redacted: what a tool read, printed or would change (a diff's context lines
// come from the file) never leaves it with a secret in it — not to the agent loop, not to an MCP client,
// not into a stored proposal or an applied action's result. Inputs are untouched: a write applies what
// was proposed, byte for byte.
import type { Proposal, ToolDefinition, ToolOutput } from './types.js'

const redactOutput = (output: ToolOutput, redact: (text: string) => string): ToolOutput => ({
  ...output,
  content: redact(output.content),
})

function redactProposal(
  proposed: Proposal | ToolOutput,
  redact: (text: string) => string,
): Proposal | ToolOutput {
  if (!('classification' in proposed)) return redactOutput(proposed, redact)
  return {
    ...proposed,
    summary: redact(proposed.summary),
    ...(proposed.diff !== undefined && { diff: redact(proposed.diff) }),
  }
}

export function redactToolOutputs(
  tools: readonly ToolDefinition[],
  redact: (text: string) => string,
): ToolDefinition[] {
  return tools.map((tool): ToolDefinition => {
    if (tool.kind === 'read') {
      return { ...tool, run: async (input, context) => redactOutput(await tool.run(input, context), redact) }
    }
    return {
      ...tool,
      propose: async (input, context) => redactProposal(await tool.propose(input, context), redact),
      apply: async (input, context, proposal) =>
        redactOutput(await tool.apply(input, context, proposal), redact),
    }
  })
}
