// Every CLI adapter, in registry order: detection, `hangar agents` and the default agent follow it.
import { claudeCodeAdapter } from './defs/claude-code.js'
import { codexAdapter } from './defs/codex.js'
import { copilotAdapter } from './defs/copilot.js'
import { cursorAgentAdapter } from './defs/cursor-agent.js'
import { geminiAdapter } from './defs/gemini.js'
import { openclawAdapter } from './defs/openclaw.js'
import { opencodeAdapter } from './defs/opencode.js'
import { type AdapterRegistry, createAdapterRegistry } from './registry.js'

export function createDefaultAdapterRegistry(): AdapterRegistry {
  return createAdapterRegistry([
    claudeCodeAdapter,
    codexAdapter,
    geminiAdapter,
    opencodeAdapter,
    copilotAdapter,
    openclawAdapter,
    cursorAgentAdapter,
  ])
}
