// Finding the project and its hangar.yaml the way git finds .git: walk up from the working directory.
// The project is the directory holding hangar.yaml; else the git root; else the working directory.
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { defaultConfig, type HangarConfig, parseConfig } from '../core/config.js'
import { AppError } from '../core/errors.js'

export interface Project {
  dir: string
  name: string
  /** Absolute path of hangar.yaml, or null when the project has none. */
  configFile: string | null
}

function findUp(start: string, entry: string): string | null {
  let directory = path.resolve(start)
  for (;;) {
    if (existsSync(path.join(directory, entry))) return directory
    const parent = path.dirname(directory)
    if (parent === directory) return null
    directory = parent
  }
}

export function findProject(cwd: string): Project {
  const withConfig = findUp(cwd, 'hangar.yaml')
  const dir = withConfig ?? findUp(cwd, '.git') ?? path.resolve(cwd)
  return {
    dir,
    name: path.basename(dir),
    configFile: withConfig ? path.join(withConfig, 'hangar.yaml') : null,
  }
}

export async function loadConfigFile(file: string | null): Promise<HangarConfig> {
  if (!file) return defaultConfig()
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new AppError(
      'config_invalid',
      `cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'check the file permissions',
      },
    )
  }
  return parseConfig(text, file)
}
