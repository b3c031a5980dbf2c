// hangar agents — which agent CLIs are installed, their versions, sign-in state and capabilities.
import path from 'node:path'
import type { Command } from 'commander'
import { describeDetection, describeDetectionSource } from '../../adapters/detection.js'
import type { AdapterId } from '../../core/adapter-ids.js'
import { describeDefaultPermissions } from '../../core/permissions.js'
import { builtinAgentEntry, describeBuiltin } from '../../runs/builtin-readiness.js'
import { checkHostSandbox } from '../../sandbox/remote-sandbox.js'
import { describeSandboxStatus, sandboxStatus } from '../../sandbox/sandbox-status.js'
import { type GlobalOptions, withRuntime } from '../context.js'
import { type CliIo, printJson } from '../output.js'

export function registerAgentsCommand(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('agents')
    .description(
      'list agent CLIs (installed or not, version, sign-in state, capabilities) and whether the built-in agent has a provider',
    )
    .option('--refresh', 'detect again instead of using the cached result (kept 24 h)')
    .option('--json', 'print the detection results as JSON')
    .action(async (options: { refresh?: boolean; json?: boolean }) => {
      const { detection, builtin, sandbox } = await withRuntime(io, globals(), async (runtime) => ({
        detection: await runtime.detectAgents({ refresh: options.refresh ?? false }),
        // The owner's view: their provider settings, and this process's environment.
        builtin: await runtime.builtinReadiness(runtime.owner.id),
        // A sandboxed profile's SSH target is asked whether it can confine runs (one command there).
        sandbox: await sandboxStatus(runtime.config, io.env, path.basename(runtime.projectDir), (name) =>
          checkHostSandbox(runtime.targets.get(name)),
        ),
      }))
      if (options.json) return printJson(io, [...detection.adapters, builtinAgentEntry(builtin)])
      for (const adapter of detection.adapters) {
        io.stdout.write(`${describeDetection(adapter)}\n`)
        // The default is what a profile without `permissions:` gets (issue 18 item 8).
        io.stdout.write(`    ${describeDefaultPermissions(adapter.id as AdapterId)}\n`)
      }
      io.stdout.write(`${describeBuiltin(builtin)}\n`)
      io.stdout.write(`    ${describeDefaultPermissions('builtin')}\n`)
      for (const line of describeSandboxStatus(sandbox)) io.stdout.write(`${line}\n`)
      io.stderr.write(`${describeDetectionSource(detection)}\n`)
    })
}
