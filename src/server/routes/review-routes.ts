// Review and land over HTTP: a workspace's change set, review comments sent to its agent, landing it in
// the user's repository, and a run that resolves a land's conflicts. All of it is review-service.ts; this
// file reads requests and says who is asking (landing needs a session or the `approve` scope).
import type { Hono } from 'hono'
import { z } from 'zod'
import { AppError } from '../../core/errors.js'
import type { Principal } from '../../store/auth-service.js'
import { actorOf } from '../../store/auth-service.js'
import { mayDecide } from '../../runs/action-decider.js'
import type { ReviewCaller } from '../../workspaces/review/review-service.js'
import type { RuntimeServices } from '../app.js'
import type { AppVariables } from '../auth-middleware.js'
import { readJsonBody } from '../request-body.js'

export const reviewCommentSchema = z.strictObject({
  path: z.string().min(1).max(4096).describe('The file, relative to the workspace'),
  startLine: z.number().int().min(1),
  endLine: z.number().int().min(1),
  body: z.string().trim().min(1).max(20_000),
})
export const reviewSchema = z.strictObject({
  comments: z.array(reviewCommentSchema).min(1).max(100),
})
export const strategySchema = z.enum(['merge', 'squash', 'rebase'])
export const landSchema = z.strictObject({
  into: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe('The branch to land into (default: the one it was made from)'),
  strategy: strategySchema.optional().describe('merge (default), squash or rebase'),
  squash: z.boolean().optional(),
  rebase: z.boolean().optional(),
  message: z.string().trim().min(1).max(20_000).optional(),
  removeWorkspace: z.boolean().optional(),
})
export const resolveSchema = z.strictObject({
  into: z.string().min(1).max(255).optional(),
  strategy: strategySchema.optional(),
})

/** Who asks, as the review service takes it. */
export function reviewCallerOf(principal: Principal): ReviewCaller {
  return {
    userId: principal.user.id,
    actor: actorOf(principal),
    mayLand: mayDecide(principal),
  }
}

/** `strategy`, or the `squash`/`rebase` flags the contract names. */
export function strategyOf(body: z.output<typeof landSchema>): 'merge' | 'squash' | 'rebase' | undefined {
  const flags = [body.squash && 'squash', body.rebase && 'rebase'].filter(Boolean)
  if (flags.length > 1 || (flags.length && body.strategy && body.strategy !== flags[0]))
    throw new AppError('invalid_request', 'give one strategy: merge, squash or rebase', {
      details: { field: 'strategy' },
    })
  return body.strategy ?? (body.squash ? 'squash' : body.rebase ? 'rebase' : undefined)
}

export function registerReviewRoutes(
  app: Hono<{ Variables: AppVariables }>,
  deps: { runtime: Pick<RuntimeServices, 'review'> },
): void {
  const review = deps.runtime.review
  if (!review) return

  app.get('/api/workspaces/:id/diff', async (context) => {
    const base = context.req.query('base')
    const stat = ['1', 'true'].includes(context.req.query('stat') ?? '')
    return context.json(
      await review.diff(reviewCallerOf(context.get('principal')), context.req.param('id'), {
        ...(base && { base }),
        stat,
      }),
    )
  })

  app.get('/api/workspaces/:id/review', async (context) =>
    context.json({
      comments: await review.comments(reviewCallerOf(context.get('principal')), context.req.param('id')),
    }),
  )

  app.post('/api/workspaces/:id/review', async (context) => {
    const body = await readJsonBody(context, reviewSchema)
    const result = await review.review(
      reviewCallerOf(context.get('principal')),
      context.req.param('id'),
      body.comments,
    )
    return context.json(result, 202)
  })

  app.post('/api/workspaces/:id/land', async (context) => {
    const body = await readJsonBody(context, landSchema)
    return context.json(
      await review.land(reviewCallerOf(context.get('principal')), context.req.param('id'), {
        into: body.into,
        strategy: strategyOf(body),
        message: body.message,
        removeWorkspace: body.removeWorkspace,
      }),
    )
  })

  app.post('/api/workspaces/:id/resolve-conflicts', async (context) => {
    const body = await readJsonBody(context, resolveSchema)
    return context.json(
      await review.resolveConflicts(reviewCallerOf(context.get('principal')), context.req.param('id'), body),
      202,
    )
  })
}
