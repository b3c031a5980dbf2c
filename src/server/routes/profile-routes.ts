// Agent profiles: the ones of hangar.yaml (read-only here: edit the file) and the ones people create in
// the UI or API (stored per user). A profile name may not be an adapter id; every definition is checked
// by the same schema and cross-reference checks as hangar.yaml (runs/profile-problems), and a stored one is
// shown with the problems a later hangar.yaml gave it (`issues`). Warnings (`severity: 'warning'`, e.g.
// feeds on a profile with `proxy: false`) are in `issues` too, for every profile, and refuse nothing.
import path from 'node:path'
import type { Hono } from 'hono'
import { z } from 'zod'
import { isAdapterId } from '../../core/adapter-ids.js'
import { ProfileSchema } from '../../core/config.js'
import { SandboxModeSchema, withDefaultSandbox } from '../../core/sandbox-schema.js'
import { AppError } from '../../core/errors.js'
import { assertMayDecide } from '../../runs/action-decider.js'
import {
  assertValidUserProfile,
  configProfileWarnings,
  type ProfileProblem,
  storedProfileProblems,
  userProfileProblems,
} from '../../runs/profile-problems.js'
import { sandboxSettingsFor } from '../../sandbox/run-sandbox.js'
import type { Principal } from '../../store/auth-service.js'
import type { RuntimeServices, ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const profileName = z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/, 'letters, digits, ".", "_" or "-"')
const createSchema = z.strictObject({ name: profileName, definition: ProfileSchema })

/**
 * Auto-approving is deciding in advance: a profile that applies its own writes can be saved only by whom
 * may confirm them (issue 17 item 2) — else an `api` PAT would set `autoApprove` and skip the scope.
 */
function checkAutoApprove(principal: Principal, definition: { autoApprove?: readonly string[] }): void {
  if ((definition.autoApprove ?? []).length > 0) assertMayDecide(principal)
}

export function registerProfileRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { store: ServerDeps['store']; runtime: RuntimeServices },
): void {
  const { store, runtime } = deps
  const fromConfig = (name: string) => runtime.config.agents[name]

  function checkName(name: string): void {
    if (isAdapterId(name))
      throw new AppError('invalid_request', `"${name}" is an adapter id; pick another profile name`, {
        details: { fields: [{ path: 'name', message: 'a profile may not be named like an adapter' }] },
      })
    if (fromConfig(name)) {
      throw new AppError('conflict', `profile "${name}" is defined in hangar.yaml`, {
        hint: 'edit hangar.yaml to change it',
      })
    }
  }

  /** Whether its runs are sandboxed here: its own setting, else the daemon's project's default, else off. */
  const sandboxModeOf = (definition: Record<string, unknown>, role: Principal['user']['role']) => {
    const own = SandboxModeSchema.safeParse(definition.sandbox)
    const profile = own.success ? { sandbox: own.data } : {}
    return sandboxSettingsFor(profile, runtime.config, path.basename(runtime.projectDir), role).mode
  }

  /** Problems of a stored profile against the current config (empty when it is fine). */
  const issuesOf = (name: string, definition: unknown) =>
    storedProfileProblems(name, definition, runtime.config)

  app.get('/api/profiles', async (context) => {
    const { role } = context.get('principal').user
    const stored = await store.forUser(context.get('principal').user.id).profiles.list()
    return context.json([
      ...Object.entries(runtime.config.agents).map(([name, definition]) => ({
        name,
        source: 'config',
        definition,
        sandboxMode: sandboxModeOf(definition, role),
        issues: configProfileWarnings(name, runtime.config),
      })),
      ...stored.map((profile) => ({
        name: profile.name,
        source: 'user',
        definition: profile.definition,
        sandboxMode: sandboxModeOf(profile.definition, role),
        updatedAt: profile.updatedAt,
        issues: issuesOf(profile.name, profile.definition),
      })),
    ])
  })

  app.post('/api/profiles', async (context) => {
    const body = await readJsonBody(context, createSchema)
    checkName(body.name)
    const definition = withDefaultSandbox(body.definition, undefined)
    assertValidUserProfile(body.name, definition, runtime.config, 'definition.')
    checkAutoApprove(context.get('principal'), definition)
    const profiles = store.forUser(context.get('principal').user.id).profiles
    if (await profiles.get(body.name))
      throw new AppError('conflict', `profile "${body.name}" exists`, { hint: 'PUT to change it' })
    const saved = await profiles.put(body.name, definition)
    return context.json(
      {
        name: saved.name,
        source: 'user',
        definition: saved.definition,
        issues: userProfileProblems(body.name, definition, runtime.config),
      },
      201,
    )
  })

  app.get('/api/profiles/:name', async (context) => {
    const name = context.req.param('name')
    const configured = fromConfig(name)
    if (configured)
      return context.json({
        name,
        source: 'config',
        definition: configured,
        issues: configProfileWarnings(name, runtime.config),
      })
    const stored = await store.forUser(context.get('principal').user.id).profiles.get(name)
    if (!stored) throw new AppError('not_found', `no profile "${name}"`)
    return context.json({
      name,
      source: 'user',
      definition: stored.definition,
      issues: issuesOf(name, stored.definition),
    })
  })

  app.put('/api/profiles/:name', async (context) => {
    const name = context.req.param('name')
    if (!profileName.safeParse(name).success)
      throw new AppError('invalid_request', `"${name}" is not a profile name`)
    checkName(name)
    const profiles = store.forUser(context.get('principal').user.id).profiles
    const stored = await profiles.get(name)
    const definition = withDefaultSandbox(
      await readJsonBody(context, ProfileSchema),
      stored ? (stored.definition as { sandbox?: unknown }) : undefined,
    )
    assertValidUserProfile(name, definition, runtime.config)
    checkAutoApprove(context.get('principal'), definition)
    const saved = await profiles.put(name, definition)
    return context.json({
      name,
      source: 'user',
      definition: saved.definition,
      issues: userProfileProblems(name, definition, runtime.config),
    })
  })

  app.delete('/api/profiles/:name', async (context) => {
    const name = context.req.param('name')
    checkName(name)
    const removed = await store.forUser(context.get('principal').user.id).profiles.delete(name)
    if (!removed) throw new AppError('not_found', `no profile "${name}"`)
    return context.body(null, 204)
  })

  // The resolved manifest (names derived, {agent} substituted, declaration order) with each feed's last
  // fetch state in this daemon. Service credentials are resolved at fetch time, so none appear here.
  app.get('/api/profiles/:name/feeds', async (context) => {
    const name = context.req.param('name')
    let issues: ProfileProblem[] = configProfileWarnings(name, runtime.config)
    if (!fromConfig(name) && !isAdapterId(name)) {
      const stored = await store.forUser(context.get('principal').user.id).profiles.get(name)
      if (!stored) throw new AppError('not_found', `no profile "${name}"`)
      issues = issuesOf(name, stored.definition)
    }
    const userId = context.get('principal').user.id
    const feeds = (await runtime.modelProxy.manifestFor(name, userId)).map((feed) => ({
      ...feed,
      state: runtime.modelProxy.fetcher.state(name, feed),
    }))
    return context.json({ profile: name, feeds, issues })
  })
}
