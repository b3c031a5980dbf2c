// What decided an adapter's sign-in answer, so a cached answer is dropped as soon as that changes (issue 20
// item 3: setting ANTHROPIC_API_KEY as the hint says must flip Claude Code to authenticated at once).
// Rather than a second list of variables and files per adapter that could drift from its probeAuth, the
// probe itself is watched: every variable it reads and every file it checks is recorded. The fingerprint
// is a sha256 over those variables' values and the files' mtimes (and existence): the cache keeps the names
// only, never a value in clear. Which binary was found stays keyed as before (PATH, HOME, adapters.<id>.path).
import { createHash } from 'node:crypto'
import { stat } from 'node:fs/promises'
import type { AuthProbeInput } from './types.js'

type Environment = Readonly<Record<string, string | undefined>>

/** The variables and files a sign-in probe consulted. */
export interface AuthInputs {
  variables: string[]
  files: string[]
}

/** Wraps a probe's input so that what it reads is recorded in `inputs`. */
export function recordingProbeInput(input: AuthProbeInput, inputs: AuthInputs): AuthProbeInput {
  const variables = new Set<string>()
  const files = new Set<string>()
  const sync = () => {
    inputs.variables = [...variables].sort()
    inputs.files = [...files].sort()
  }
  const env = new Proxy(input.env, {
    get(target, name, receiver) {
      if (typeof name === 'string') {
        variables.add(name)
        sync()
      }
      return Reflect.get(target, name, receiver) as unknown
    },
  })
  return {
    ...input,
    env,
    exists(file) {
      files.add(file)
      sync()
      return input.exists(file)
    },
    readJson(file) {
      files.add(file)
      sync()
      return input.readJson(file)
    },
  }
}

async function fileState(file: string): Promise<string> {
  const info = await stat(file).catch(() => null)
  return info ? `${info.mtimeMs}:${info.size}` : 'absent'
}

/**
 * sha256 of the consulted variables' values and the files' mtimes: another value, a
 * variable set or removed, a file touched, created or deleted each give another fingerprint.
 */
export async function authFingerprint(inputs: AuthInputs, env: Environment): Promise<string> {
  const hash = createHash('sha256')
  for (const name of inputs.variables) {
    const value = env[name]
    hash.update(JSON.stringify([name, value === undefined ? null : value]))
  }
  for (const file of inputs.files) hash.update(JSON.stringify([file, await fileState(file)]))
  return hash.digest('hex')
}
