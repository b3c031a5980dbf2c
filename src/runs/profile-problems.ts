// The one validation of a profile made in the UI or API, wherever it is met: saved (POST/PUT
// /api/profiles), shown (GET /api/profiles, `hangar feeds`) and run (submit and run start). It is
// hangar.yaml's own cross-reference check (`profileIssues`) plus the feed-path policy user profiles obey
// (issue 17: feeds only under a service's `userFeedPaths`), so a profile the config no longer supports (a
// service or target removed) is reported everywhere instead of losing a feed without a word.
import {
  dotted,
  type HangarConfig,
  type ProfileConfig,
  profileIssues,
  ProfileSchema,
} from '../core/config.js'
import { AppError } from '../core/errors.js'
import { allowedText, userProfileFeedRefusals } from '../feeds/index.js'

/**
 * One problem; `path` is a key path inside the definition (`feeds[0].source`), '' for the name. A warning
 * (`severity: 'warning'`, e.g. feeds with `proxy: false`) is reported with the errors but refuses nothing.
 */
export interface ProfileProblem {
  path: string
  message: string
  severity?: 'warning'
}

const isError = (problem: ProfileProblem) => problem.severity !== 'warning'

/** The warnings of a hangar.yaml profile (its errors refused the file already). */
export function configProfileWarnings(name: string, config: HangarConfig): ProfileProblem[] {
  const profile = config.agents[name]
  if (!profile) return []
  return profileIssues(name, profile, config)
    .filter((issue) => issue.severity === 'warning')
    .map((issue) => ({ path: dotted(issue.path), message: issue.message, severity: 'warning' as const }))
}

export type ProfileChecks = Pick<HangarConfig, 'services' | 'targets' | 'providers'>

/** Every problem of a user's profile against the current config, in key order of the checks. */
export function userProfileProblems(
  name: string,
  definition: ProfileConfig,
  config: ProfileChecks,
): ProfileProblem[] {
  const problems: ProfileProblem[] = profileIssues(name, definition, config, 'profile').map((issue) => ({
    path: dotted(issue.path),
    message: issue.message,
    ...(issue.severity && { severity: issue.severity }),
  }))
  const seen = new Set(problems.map((problem) => problem.path))
  for (const refusal of userProfileFeedRefusals(name, definition, config.services)) {
    // An unknown source or a malformed path is already named above, at the same key.
    if (!Object.hasOwn(config.services, refusal.source)) continue
    const path = dotted(['feeds', refusal.index, 'path'])
    if (seen.has(path)) continue
    seen.add(path)
    problems.push({
      path,
      message: `feed "${refusal.name}" (#${refusal.index + 1}) of profile "${name}": ${refusal.reason}`,
    })
  }
  return problems
}

/** A stored definition: its schema problems (a definition saved before a schema change), else its checks. */
export function storedProfileProblems(
  name: string,
  stored: unknown,
  config: ProfileChecks,
): ProfileProblem[] {
  const parsed = ProfileSchema.safeParse(stored)
  if (!parsed.success)
    return parsed.error.issues.map((issue) => ({
      path: dotted(issue.path.filter((segment) => typeof segment !== 'symbol')),
      message: issue.message,
    }))
  return userProfileProblems(name, parsed.data, config)
}

/**
 * 400 `invalid_request` for a definition about to be saved: the first problem in the message, every one in
 * `details.fields` with its key path in the body sent (`prefix` is `definition.` when the definition is
 * nested), and issue 17's feed refusals in `details.feeds`.
 */
export function assertValidUserProfile(
  name: string,
  definition: ProfileConfig,
  config: ProfileChecks,
  prefix = '',
): void {
  const problems = userProfileProblems(name, definition, config).filter(isError)
  const first = problems[0]
  if (!first) return
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''
  const refusals = userProfileFeedRefusals(name, definition, config.services)
  // A feed path refused for its shape does not say yet what the service would allow: the hint does.
  const refusal = refusals.find((entry) => dotted(['feeds', entry.index, 'path']) === first.path)
  const allowed =
    refusal && !refusal.outsideAllowList && Object.hasOwn(config.services, refusal.source)
      ? `service "${refusal.source}": ${allowedText(refusal.source, refusal.allowedPrefixes)}; `
      : ''
  throw new AppError('invalid_request', `${first.message}${more}`, {
    // The message says what is expected; a feed's refusal also says who can allow more.
    ...(first.path.startsWith('feeds[') && {
      hint: `${allowed}ask the operator to declare the feed in hangar.yaml for any other path or service`,
    }),
    details: {
      fields: problems.map((problem) => ({
        path: problem.path ? `${prefix}${problem.path}` : 'name',
        message: problem.message,
      })),
      ...(refusals.length > 0 && { feeds: refusals }),
    },
  })
}

/** A run may not start with a profile the config no longer supports: one line naming the problem. */
export function assertRunnableUserProfile(
  name: string,
  definition: ProfileConfig,
  config: ProfileChecks,
): void {
  const problems = userProfileProblems(name, definition, config).filter(isError)
  const first = problems[0]
  if (!first) return
  const more =
    problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : ''
  throw new AppError(
    'invalid_request',
    `profile "${name}" no longer matches hangar.yaml: ${first.path ? `${first.path}: ` : ''}${first.message}${more}`,
    {
      hint: `fix it on the Agents page (PUT /api/profiles/${name}), or ask the operator to restore what it names`,
      details: { profile: name, issues: problems },
    },
  )
}
