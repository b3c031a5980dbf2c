// The oldest Node.js Hangar runs on (package.json "engines" says the same; `hangar doctor` checks it too).
// Kept free of imports: the CLI entry checks it before loading anything an older Node could fail on.
export const MINIMUM_NODE_VERSION = '20.19.0'
/** The same, as people write it: "20.19". */
export const MINIMUM_NODE_LABEL = MINIMUM_NODE_VERSION.replace(/\.0$/, '')

function parts(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split(/[.-]/)
    .slice(0, 3)
    .map((part) => Number.parseInt(part, 10) || 0)
}

/** True when `version` (e.g. process.versions.node, with or without a leading "v") is older than `minimum`. */
export function isOlderNode(version: string, minimum: string = MINIMUM_NODE_VERSION): boolean {
  const have = parts(version)
  const need = parts(minimum)
  for (let index = 0; index < 3; index++) {
    const difference = (have[index] ?? 0) - (need[index] ?? 0)
    if (difference !== 0) return difference < 0
  }
  return false
}

/** What to tell someone running Hangar on `version`, or undefined when that Node.js is new enough. */
export function unsupportedNodeMessage(version: string): string | undefined {
  if (!isOlderNode(version)) return undefined
  return `hangar needs Node.js ${MINIMUM_NODE_LABEL} or newer (this is v${version.replace(/^v/, '')}); see README 'Install'`
}
