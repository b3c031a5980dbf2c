// The schema of `hangar.yaml`, parsed once at start-up and passed down. Every object is strict: an
// unknown key is an error that names the file, the line and the key path (a typo must never be ignored).
// This module only parses text; reading the file is the caller's job (core does no I/O).

import { isMap, LineCounter, parseDocument } from 'yaml'
import { z } from 'zod'
import { ADAPTER_IDS, isAdapterId } from './adapter-ids.js'
import { AppError } from './errors.js'
import { LIMIT_DURATION_EXPECTED, limitDurationMs } from './duration.js'
import { deriveFeedName } from './feed-names.js'
import { feedPathProblem } from './feed-paths.js'
import { WRITE_CLASSIFICATIONS } from './events.js'
import { KNOWN_PROVIDERS } from './provider-names.js'
import { permissionIssues } from './permissions.js'
import { PermissionsSchema } from './permissions-schema.js'
import { SandboxHostsSchema, SandboxModeSchema, SandboxPathsSchema } from './sandbox-schema.js'
import {
  ProjectSettingsSchema,
  type WorkspaceLifecycleConfig,
  WorkspaceLifecycleSchema,
} from './workspace-lifecycle-schema.js'

const name = z
  .string()
  .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, 'expected a name of letters, digits, ".", "_" or "-"')
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name')
const httpUrl = z
  .string()
  .refine((value) => /^https?:\/\/[^\s/]+/.test(value) && URL.canParse(value), 'expected an http(s) URL')

const serviceSchema = z.strictObject({
  url: httpUrl,
  auth: z.strictObject({ bearerEnv: envName }).optional(),
  /**
   * Path prefixes that feeds of profiles made in the UI or API (by any user) may fetch from this service
   * with its credentials. hangar.yaml's own profiles may use any path; by default user feeds get none.
   */
  userFeedPaths: z.array(z.string().startsWith('/', 'expected a path prefix starting with "/"')).optional(),
})

/**
 * `adapters.<id>`: where to find a CLI the daemon's PATH does not reach (installed with nvm, a daemon
 * started by a service manager). Detection and every run use exactly this file.
 */
const adapterOverrideSchema = z.strictObject({
  path: z
    .string()
    .startsWith('/', 'expected an absolute path to the CLI, e.g. /home/me/.nvm/versions/node/v22/bin/claude'),
})
const CLI_ADAPTER_IDS = ADAPTER_IDS.filter((id) => id !== 'builtin')
const adaptersSchema = z.strictObject(
  Object.fromEntries(CLI_ADAPTER_IDS.map((id) => [id, adapterOverrideSchema.optional()])) as Record<
    (typeof CLI_ADAPTER_IDS)[number],
    z.ZodOptional<typeof adapterOverrideSchema>
  >,
)

const providerSchema = z.strictObject({
  baseUrl: httpUrl.optional(),
  apiKeyEnv: envName.optional(),
  model: z.string().min(1).optional(),
})

const targetSchema = z.strictObject({
  ssh: z.string().regex(/^([^@\s]+@)?[^@\s:]+$/, 'expected "user@host" or "host"'),
  dir: z.string().min(1),
  port: z.int().min(1).max(65535).optional(),
  identityFile: z.string().min(1).optional(),
})

const feedSchema = z.strictObject({
  name: name.optional(),
  source: name,
  path: z.string().startsWith('/', 'expected a path starting with "/"'),
  ttl: z.number().positive('expected a number of seconds greater than 0'),
})

/** A run limit: `"90s"`, `"30m"`, `"2h"` or `off`; kept as typed (the defaults apply where it is absent). */
const runLimit = z
  .string({ error: LIMIT_DURATION_EXPECTED })
  .refine((value) => limitDurationMs(value) !== undefined, LIMIT_DURATION_EXPECTED)

const budgetSchema = z.strictObject({
  usd: z.number().positive(),
  window: z.string().regex(/^\d+[hdw]$/, 'expected a window such as "12h", "1d" or "1w"'),
})

export const ProfileSchema = z.strictObject({
  adapter: z.enum(ADAPTER_IDS),
  model: z.string().min(1).optional(),
  provider: name.optional(),
  skills: z.array(z.string().min(1)).optional(),
  feeds: z.array(feedSchema).optional(),
  target: name.optional(),
  concurrency: z.int().min(1).default(1),
  autoApprove: z.array(z.enum(WRITE_CLASSIFICATIONS)).default([]),
  proxy: z.boolean().default(true),
  isolateHome: z.boolean().default(false),
  budget: budgetSchema.optional(),
  cliArgs: z.array(z.string()).default([]),
  /** Wall-clock limit of one run (default 60m); see runs/run-limits.ts. */
  timeout: runLimit.optional(),
  /** Limit on no agent output and no model request in flight (default 15m). */
  idleTimeout: runLimit.optional(),
  /** What the agent may do without asking (src/core/permissions.ts); default mode `workspace`. */
  permissions: PermissionsSchema.optional(),
  /** `off` | `workspace` (bubblewrap); unset = the project's `sandbox`, else `off` (src/sandbox/). */
  sandbox: SandboxModeSchema.optional(),
  /** Extra paths the sandbox shows: `readOnly` as they are, `writable` bound read-write. */
  sandboxPaths: SandboxPathsSchema.optional(),
  /** Hosts (`name` or `name:port`) the sandboxed agent may reach through the per-run CONNECT proxy. */
  sandboxHosts: SandboxHostsSchema.optional(),
})

const proxySchema = z.strictObject({
  feedTimeoutMs: z.int().positive().default(3000),
  feedMaxBytes: z
    .int()
    .positive()
    .default(32 * 1024),
  feedTotalMaxBytes: z
    .int()
    .positive()
    .default(64 * 1024),
  openaiPlacement: z.enum(['system', 'user']).default('system'),
  bodyLimitMb: z.number().positive().default(32),
  /** An upstream that does not accept the connection in this long fails the request (502). */
  upstreamConnectTimeoutMs: z.int().positive().default(10_000),
  /** An upstream silent this long (no response headers, or no body bytes mid-stream) fails the request. */
  upstreamIdleTimeoutMs: z.int().positive().default(300_000),
})

const serverSchema = z.strictObject({
  maxConcurrentRuns: z.int().min(1).default(4),
  /**
   * Directories (besides the daemon's project) a run may work in; a run's cwd must resolve inside one.
   * Relative paths are resolved against the project directory by the caller. The data dir may not be in one.
   */
  allowedRoots: z.array(z.string().min(1)).default([]),
  /** Behind a TLS reverse proxy: honour X-Forwarded-Proto/For (Secure cookies, per-client rate limits). */
  trustProxy: z.boolean().default(false),
  /** Binding a non-loopback address needs this (or `hangar up --public`). */
  public: z.boolean().default(false),
  /**
   * Host names browsers may use to reach the daemon besides its loopback names and bind address (e.g. the
   * name of the TLS reverse proxy in front of it); any other Host header is refused (DNS rebinding).
   */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** How often a daemon writes its heartbeat row (several daemons on one PostgreSQL). */
  heartbeatMs: z.int().min(100).default(5000),
  /** A node silent this long is gone: another node marks its unfinished runs interrupted. */
  leaseMs: z.int().min(300).default(20_000),
})

/**
 * `providers:` holds the provider entries plus one flag, `allowPrivateNetworks` (a user-set base URL may
 * point at loopback or private addresses; default off). The flag is lifted out to the top level of the
 * parsed config so `config.providers` stays a plain map of providers.
 */
const providersSchema = z
  .object({ allowPrivateNetworks: z.boolean().optional() })
  .catchall(providerSchema)
  .default({})

const notificationsSchema = z.strictObject({
  /** Webhook and push targets may be loopback or private addresses (checked after DNS, at connect time). */
  allowPrivateNetworks: z.boolean().default(false),
  /** The address links in notifications open (default: the address the daemon listens on). */
  publicUrl: z.url().optional(),
  /** The VAPID subject push services may contact: a mailto: or https: URL. */
  vapidSubject: z
    .string()
    .regex(/^(mailto:|https:)/)
    .optional(),
})

const configShape = z.strictObject({
  defaultAgent: name.optional(),
  services: z.record(name, serviceSchema).default({}),
  providers: providersSchema,
  targets: z.record(name, targetSchema).default({}),
  agents: z.record(name, ProfileSchema).default({}),
  adapters: adaptersSchema.default({}),
  proxy: proxySchema.default(() => proxySchema.parse({})),
  server: serverSchema.default(() => serverSchema.parse({})),
  /**
   * Triggers (src/triggers): `allowPrivateNetworks` lets reports reach a loopback or private
   * `services.github` URL (default off; checked where the connection is made).
   */
  triggers: z
    .strictObject({ allowPrivateNetworks: z.boolean().default(false) })
    .default(() => ({ allowPrivateNetworks: false })),
  /** Per-project settings, keyed by project name (the workspace lifecycle). */
  projects: z.record(name, ProjectSettingsSchema).default({}),
  /** Web Push and outbound webhooks (issue 24). */
  notifications: notificationsSchema.default(() => notificationsSchema.parse({})),
})

/**
 * A map keyed by names users type (`__proto__`, `constructor`) must not answer with Object.prototype's
 * members: every name-keyed map of the config has no prototype.
 */
function nameMap<Value>(entries: Record<string, Value>): Record<string, Value> {
  return Object.assign(Object.create(null) as Record<string, Value>, entries)
}

export const ConfigSchema = configShape.transform(({ providers, ...config }) => {
  const { allowPrivateNetworks, ...entries } = providers
  return {
    ...config,
    services: nameMap(config.services),
    targets: nameMap(config.targets),
    agents: nameMap(config.agents),
    projects: nameMap(config.projects),
    providers: nameMap(entries as Record<string, z.output<typeof providerSchema>>),
    /** `providers.allowPrivateNetworks`: user-set base URLs may reach loopback and private networks. */
    allowPrivateNetworks: allowPrivateNetworks ?? false,
  }
})

export type HangarConfig = z.output<typeof ConfigSchema>
export type ProfileConfig = HangarConfig['agents'][string]
export type FeedConfig = NonNullable<ProfileConfig['feeds']>[number]
export type TargetConfig = HangarConfig['targets'][string]
export type ServiceConfig = HangarConfig['services'][string]
export type ProviderConfig = HangarConfig['providers'][string]
/** `adapters.<id>.path` per CLI adapter id. */
export type AdapterOverrides = HangarConfig['adapters']

export { KNOWN_PROVIDERS }

export function defaultConfig(): HangarConfig {
  return ConfigSchema.parse({})
}

export interface ConfigIssue {
  file: string
  line?: number
  column?: number
  /** Dotted key path, e.g. `agents.reviewer.adapter`. */
  path: string
  message: string
}

export type PathSegment = string | number

/** `['feeds', 0, 'source']` → `feeds[0].source` (the key paths of config issues and API field errors). */
export function dotted(path: readonly PathSegment[]): string {
  return path.reduce<string>(
    (out, segment) =>
      typeof segment === 'number' ? `${out}[${segment}]` : out ? `${out}.${segment}` : segment,
    '',
  )
}

/** A problem of one profile; `path` is relative to the profile (`[]` is its name). */
export interface ProfileIssue {
  path: PathSegment[]
  message: string
  /** A warning is shown wherever issues are, but refuses nothing; without it, the issue is an error. */
  severity?: 'warning'
}

/** What a profile is checked against: the parts of the config its names refer to. */
export type ProfileReferences = Pick<HangarConfig, 'services' | 'targets' | 'providers'>

/**
 * The cross-references of one profile (services, targets, providers, feed names and paths, its name): the
 * one check every profile gets, from hangar.yaml at start-up or from the UI/API when saved, shown or run.
 * `noun` is how messages call it ("agent" in hangar.yaml, "profile" in the API).
 */
export function profileIssues(
  profileName: string,
  profile: ProfileConfig,
  config: ProfileReferences,
  noun: 'agent' | 'profile' = 'agent',
): ProfileIssue[] {
  const issues: ProfileIssue[] = []
  const providerNames = new Set<string>([...KNOWN_PROVIDERS, ...Object.keys(config.providers)])
  if (isAdapterId(profileName)) {
    issues.push({
      path: [],
      message: `a profile may not be named like an adapter ("${profileName}"): pick another name`,
    })
  }
  if (profile.provider !== undefined) {
    if (profile.adapter !== 'builtin') {
      issues.push({
        path: ['provider'],
        message: `"provider" applies only to the builtin adapter; ${profile.adapter} uses its own configuration`,
      })
    } else if (!providerNames.has(profile.provider)) {
      issues.push({
        path: ['provider'],
        message: `unknown provider "${profile.provider}": expected one of ${[...providerNames].join(', ')}`,
      })
    }
  }
  if (profile.adapter === 'builtin' && profile.target !== undefined && profile.target !== 'local') {
    issues.push({
      path: ['target'],
      message: `the built-in agent runs inside the daemon, so it cannot use target "${profile.target}": remove target, or pick a CLI adapter`,
    })
  } else if (
    profile.target !== undefined &&
    profile.target !== 'local' &&
    !Object.hasOwn(config.targets, profile.target)
  ) {
    const known = Object.keys(config.targets)
    issues.push({
      path: ['target'],
      message: `unknown target "${profile.target}": expected "local"${known.length ? ` or one of ${known.join(', ')}` : ' or a name under targets: in hangar.yaml'}`,
    })
  }
  const feedIndexByName = new Map<string, number>()
  profile.feeds?.forEach((feed, index) => {
    const feedName = deriveFeedName(feed, index)
    const label = `feed "${feedName}" (#${index + 1}) of ${noun} "${profileName}"`
    if (!Object.hasOwn(config.services, feed.source)) {
      const known = Object.keys(config.services)
      issues.push({
        path: ['feeds', index, 'source'],
        message: `${label}: unknown source "${feed.source}": ${known.length ? `expected one of ${known.join(', ')}` : 'declare it under services: in hangar.yaml'}`,
      })
    }
    // Even the operator's feeds: the service's credentials must go exactly where the path says.
    const pathProblem = feedPathProblem(feed.path)
    if (pathProblem) {
      issues.push({
        path: ['feeds', index, 'path'],
        message: `${label}: path "${feed.path}" is refused: ${pathProblem}`,
      })
    }
    const first = feedIndexByName.get(feedName)
    if (first !== undefined) {
      issues.push({
        path: ['feeds', index, feed.name ? 'name' : 'path'],
        message: `${label}: the name "${feedName}" is already used by feed #${first + 1}: give one of them a different name`,
      })
    } else feedIndexByName.set(feedName, index)
  })
  issues.push(...permissionIssues(profile))
  // A sandboxed agent's only way out is Hangar's proxy (or its allowed hosts): without either it cannot
  // reach its model at all, so the combination is refused where it is written, not at every run.
  if (
    profile.sandbox === 'workspace' &&
    profile.proxy === false &&
    profile.adapter !== 'builtin' &&
    (profile.sandboxHosts ?? []).length === 0
  )
    issues.push({
      path: ['sandbox'],
      message: `${noun} "${profileName}" has sandbox: workspace but proxy: false: a sandboxed agent reaches only Hangar's proxy, so it could not reach its model; remove proxy: false, list the provider's host in sandboxHosts, or set sandbox: off`,
    })
  // Feeds are injected by the proxy: a profile that bypasses it keeps them away from the model (issue 18.7).
  if (profile.proxy === false && profile.feeds?.length) {
    const count = profile.feeds.length
    const names = profile.feeds.map((feed, index) => deriveFeedName(feed, index)).join(', ')
    issues.push({
      path: ['proxy'],
      severity: 'warning',
      message: `${noun} "${profileName}" has ${count} feed${count > 1 ? 's' : ''} (${names}) but proxy: false: feeds are injected by Hangar's proxy, so they will not reach the model; remove proxy: false, or the feeds`,
    })
  }
  return issues
}

/** Cross-references zod cannot see: names that must exist elsewhere in the file. */
function crossReferenceIssues(config: HangarConfig): ProfileIssue[] {
  const issues: ProfileIssue[] = []
  for (const [providerName, provider] of Object.entries(config.providers)) {
    if (!/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/.test(providerName)) {
      issues.push({
        path: ['providers', providerName],
        message: 'expected a name of letters, digits, ".", "_" or "-"',
      })
      continue
    }
    if (!(KNOWN_PROVIDERS as readonly string[]).includes(providerName) && !provider.baseUrl) {
      issues.push({
        path: ['providers', providerName],
        message: `provider "${providerName}" is not one Hangar knows (${KNOWN_PROVIDERS.join(', ')}): give it a baseUrl`,
      })
    }
  }
  for (const [serviceName, service] of Object.entries(config.services)) {
    service.userFeedPaths?.forEach((prefix, index) => {
      const problem = feedPathProblem(prefix)
      if (problem)
        issues.push({
          path: ['services', serviceName, 'userFeedPaths', index],
          message: `path prefix "${prefix}" is refused: ${problem}`,
        })
    })
  }
  for (const [profileName, profile] of Object.entries(config.agents)) {
    for (const issue of profileIssues(profileName, profile, config))
      if (issue.severity !== 'warning')
        issues.push({ path: ['agents', profileName, ...issue.path], message: issue.message })
  }
  if (config.defaultAgent && !(config.defaultAgent in config.agents) && !isAdapterId(config.defaultAgent)) {
    issues.push({
      path: ['defaultAgent'],
      message: `unknown agent "${config.defaultAgent}": expected a profile under agents: or an adapter id`,
    })
  }
  return issues
}

/** Keys of earlier releases, and what replaced them (named in the error instead of "unknown key"). */
const RENAMED_KEYS: Record<string, string> = {
  'server.allowLocalProviders':
    "providers.allowPrivateNetworks (user-set base URLs only; the operator's own providers may be local)",
}

/** The allowed keys at a path of the schema, for "unknown key" hints. */
function allowedKeysAt(root: z.core.$ZodType, path: readonly PathSegment[]): string[] {
  let schema: z.core.$ZodType = root
  for (const segment of path) {
    schema = unwrap(schema)
    const def = schema._zod.def as {
      type: string
      shape?: Record<string, z.core.$ZodType>
      catchall?: z.core.$ZodType
    }
    if (def.type === 'object' && def.shape && typeof segment === 'string' && def.shape[segment]) {
      schema = def.shape[segment]
    } else if (def.type === 'object' && def.catchall && def.catchall._zod.def.type !== 'never') {
      schema = def.catchall
    } else if (def.type === 'record') {
      schema = (schema._zod.def as unknown as { valueType: z.core.$ZodType }).valueType
    } else if (def.type === 'array') {
      schema = (schema._zod.def as unknown as { element: z.core.$ZodType }).element
    } else return []
  }
  const def = unwrap(schema)._zod.def as { type: string; shape?: Record<string, unknown> }
  return def.type === 'object' && def.shape ? Object.keys(def.shape) : []
}

function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema
  for (;;) {
    const def = current._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType }
    if ((def.type === 'optional' || def.type === 'default' || def.type === 'nullable') && def.innerType) {
      current = def.innerType
    } else if (def.type === 'pipe' && def.in) {
      current = def.in
    } else return current
  }
}

/**
 * Parse the text of a hangar.yaml. Throws AppError `config_invalid` listing every problem; the first is
 * in the message as `file:line:column: key.path: what is expected`.
 */
export function parseConfig(text: string, file = 'hangar.yaml'): HangarConfig {
  return parseYamlWith(ConfigSchema, text, file, crossReferenceIssues)
}

/**
 * Parse a repository's `.hangar/workspace.yaml` (the shape of `projects.<name>.workspace`), with the same
 * errors as hangar.yaml: file, line and key path.
 */
export function parseWorkspaceLifecycle(text: string, file: string): WorkspaceLifecycleConfig {
  return parseYamlWith(WorkspaceLifecycleSchema, text, file, () => [])
}

function parseYamlWith<Schema extends z.ZodType>(
  schema: Schema,
  text: string,
  file: string,
  crossReferences: (parsed: z.output<Schema>) => ProfileIssue[],
): z.output<Schema> {
  const lineCounter = new LineCounter()
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true })
  const issues: ConfigIssue[] = []

  const locate = (offset: number | undefined) => {
    if (offset === undefined) return {}
    const { line, col } = lineCounter.linePos(offset)
    return { line, column: col }
  }

  for (const error of document.errors) {
    issues.push({
      file,
      ...locate(error.pos[0]),
      path: '',
      message: `YAML syntax: ${error.message.split('\n')[0]}`,
    })
  }
  if (issues.length === 0) {
    const value: unknown = document.toJS() ?? {}
    if (typeof value !== 'object' || Array.isArray(value)) {
      issues.push({
        file,
        line: 1,
        column: 1,
        path: '',
        message: 'expected a mapping of keys at the top level',
      })
    } else {
      const nodeOffset = (path: readonly PathSegment[], key?: string): number | undefined => {
        if (key !== undefined) {
          const parent = path.length ? document.getIn(path, true) : document.contents
          if (isMap(parent)) {
            const pair = parent.items.find((item) => (item.key as { value?: unknown })?.value === key)
            const range = (pair?.key as { range?: [number, number] } | undefined)?.range
            if (range) return range[0]
          }
        }
        for (let length = path.length; length > 0; length--) {
          const node = document.getIn(path.slice(0, length), true) as { range?: [number, number] } | undefined
          if (node?.range) return node.range[0]
        }
        return undefined
      }
      const parsed = schema.safeParse(value)
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const path = issue.path.filter((segment): segment is PathSegment => typeof segment !== 'symbol')
          if (issue.code === 'unrecognized_keys') {
            const allowed = allowedKeysAt(schema, path)
            for (const key of issue.keys) {
              const renamed = RENAMED_KEYS[dotted([...path, key])]
              issues.push({
                file,
                ...locate(nodeOffset(path, key)),
                path: dotted([...path, key]),
                message: renamed
                  ? `"${key}" was replaced by ${renamed}`
                  : `unknown key "${key}"${allowed.length ? `; expected one of: ${allowed.join(', ')}` : ''}`,
              })
            }
          } else {
            issues.push({ file, ...locate(nodeOffset(path)), path: dotted(path), message: issue.message })
          }
        }
      } else {
        for (const issue of crossReferences(parsed.data)) {
          issues.push({
            file,
            ...locate(nodeOffset(issue.path)),
            path: dotted(issue.path),
            message: issue.message,
          })
        }
        if (issues.length === 0) return parsed.data
      }
    }
  }
  throw configError(issues)
}

export function formatConfigIssue(issue: ConfigIssue): string {
  const where = issue.line ? `${issue.file}:${issue.line}:${issue.column ?? 1}` : issue.file
  return issue.path ? `${where}: ${issue.path}: ${issue.message}` : `${where}: ${issue.message}`
}

function configError(issues: ConfigIssue[]): AppError {
  const first = issues[0]!
  const more =
    issues.length > 1 ? ` (and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''})` : ''
  return new AppError('config_invalid', `${formatConfigIssue(first)}${more}`, {
    hint: `fix ${first.file} and try again`,
    details: { issues },
  })
}
