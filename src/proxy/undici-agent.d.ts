// undici's Agent module on its own (the package has no exports map, so its files can be imported): the
// proxy loads it instead of the package's index, which also evaluates fetch, WebSocket and the rest.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici'

  const AgentClass: typeof Agent
  export default AgentClass
}
