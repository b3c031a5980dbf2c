// Provider settings per user. The key is write-only: GET says `keyConfigured` and at most its last 4
// characters. Without an instance key these answer 503 vault_unavailable for key changes only.
// `/api/settings/builtin` is the user's default provider and model for the built-in agent, with what the
// agent will actually use and why (runs/builtin-model.ts decides).
import type { Hono } from 'hono'
import { z } from 'zod'
import { AppError, describeError } from '../../core/errors.js'
import { KNOWN_PROVIDERS } from '../../core/provider-names.js'
import { checkProviderBaseUrl } from '../../providers/base-url-policy.js'
import type { ServerDeps } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

const providerName = z.string().regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/)
const putSchema = z.strictObject({
  apiKey: z.string().max(4096).nullable().optional(),
  model: z.string().min(1).max(200).nullable().optional(),
  baseUrl: z
    .string()
    .refine((value) => /^https?:\/\//.test(value) && URL.canParse(value), 'expected an http(s) URL')
    .nullable()
    .optional(),
})

const builtinSchema = z.strictObject({
  provider: providerName.nullable(),
  model: z.string().min(1).max(200).nullable().optional(),
})

function providerParam(value: string): string {
  const parsed = providerName.safeParse(value)
  if (!parsed.success) throw new AppError('invalid_request', `"${value}" is not a provider name`)
  return parsed.data
}

export function registerSettingsRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: Pick<ServerDeps, 'credentials' | 'policy' | 'runtime'>,
): void {
  /** The user's default for the built-in agent, and what it will use (and why) with no profile. */
  async function builtinView(userId: string) {
    const saved = await deps.credentials.builtinDefault(userId)
    let effective = null
    let problem: string | null = null
    if (deps.runtime) {
      try {
        effective = await deps.runtime.builtinProvider(userId)
      } catch (error) {
        if (!(error instanceof AppError)) throw error
        problem = describeError(error)
      }
    }
    return { provider: saved?.provider ?? null, model: saved?.model ?? null, effective, problem }
  }

  app.get('/api/settings/builtin', async (context) => {
    return context.json(await builtinView(context.get('principal').user.id))
  })

  app.put('/api/settings/builtin', async (context) => {
    const body = await readJsonBody(context, builtinSchema)
    const principal = context.get('principal')
    await deps.credentials.setBuiltinDefault(principal, principal.user.id, body)
    return context.json(await builtinView(principal.user.id))
  })

  app.get('/api/settings/providers', async (context) => {
    return context.json(await deps.credentials.list(context.get('principal').user.id))
  })

  app.get('/api/settings/providers/:provider', async (context) => {
    const provider = providerParam(context.req.param('provider'))
    const view = await deps.credentials.get(context.get('principal').user.id, provider)
    if (!view && !deps.credentials.isKnownProvider(provider)) {
      throw new AppError('not_found', `no settings for provider "${provider}"`, {
        hint: `known providers: ${KNOWN_PROVIDERS.join(', ')}; another name needs a baseUrl (PUT)`,
      })
    }
    return context.json(
      view ?? { provider, keyConfigured: false, keyLast4: null, model: null, baseUrl: null, updatedAt: null },
    )
  })

  app.put('/api/settings/providers/:provider', async (context) => {
    const provider = providerParam(context.req.param('provider'))
    const body = await readJsonBody(context, putSchema)
    // A per-user base URL is an SSRF risk: no metadata or link-local addresses, local ones only if allowed.
    if (body.baseUrl) checkProviderBaseUrl(body.baseUrl, { allowLocal: deps.policy.allowPrivateNetworks })
    const principal = context.get('principal')
    return context.json(await deps.credentials.put(principal, principal.user.id, provider, body))
  })

  app.delete('/api/settings/providers/:provider', async (context) => {
    const provider = providerParam(context.req.param('provider'))
    const principal = context.get('principal')
    const removed = await deps.credentials.remove(principal, principal.user.id, provider)
    if (!removed) throw new AppError('not_found', `no settings for provider "${provider}"`)
    return context.body(null, 204)
  })
}
