// The package version, read from package.json wherever this file runs from (src/ under vitest,
// dist/src/ or the bundle in dist/bin/ when built).
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

function findPackageJson(): string | undefined {
  let directory = path.dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const candidate = path.join(directory, 'package.json')
    if (existsSync(candidate)) {
      const parsed = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string }
      if (parsed.name === 'hangar') return candidate
    }
    const parent = path.dirname(directory)
    if (parent === directory) return undefined
    directory = parent
  }
}

const packageJson = findPackageJson()

export const VERSION: string = packageJson
  ? ((JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version ?? '0.0.0')
  : '0.0.0'

/** The package root (where package.json is), for finding shipped assets. */
export const PACKAGE_ROOT: string | undefined = packageJson && path.dirname(packageJson)
