// What the agent loop needs from the outside, as narrow interfaces (the agent does not know the store):
// the conversation's messages, and a place to park proposals until a person decides them.
import type { AgentEvent, WriteClassification } from '../core/events.js'
import type { Message } from '../core/messages.js'
import type { Proposal } from './tools/types.js'

export interface ConversationMemory {
  /** Every message of the conversation, in order. */
  load(): Promise<Message[]>
  append(message: Message): Promise<void>
}

export interface ParkedProposal {
  actionId: string
  expiresAt: string
}

export interface ProposalDesk {
  /** Stores a proposal as a pending action; nothing is changed in the workspace. */
  park(
    call: { toolCallId: string; tool: string; input: unknown },
    proposal: Proposal,
  ): Promise<ParkedProposal>
  /**
   * Applies an auto-approved write at once, as a confirmation does: claimed, applied outside any store
   * transaction, then settled with its audit row and tool message. Returns the tool message content.
   */
  applyNow(
    call: { toolCallId: string; tool: string; input: unknown },
    proposal: Proposal,
  ): Promise<{ content: string; isError: boolean }>
}

export type EmitEvent = (event: AgentEvent) => void

export interface AutoApproval {
  classifications: readonly WriteClassification[]
}
