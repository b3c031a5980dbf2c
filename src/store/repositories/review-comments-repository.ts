// Review comments on a workspace's diff: each posted review is a few comments sharing a review id, with
// the lines they quoted and the commit and blob they were made on (for "outdated" later).
import { newId } from '../../core/ids.js'
import type { ReviewCommentsTable } from '../schema.js'
import { nowIso, type RepositoryContext } from './context.js'

export interface ReviewComment {
  id: string
  workspaceId: string
  reviewId: string
  path: string
  startLine: number
  endLine: number
  body: string
  quoted: string
  commit: string
  blob: string
  runId: string | null
  createdAt: string
}

export type NewReviewComment = Omit<ReviewComment, 'id' | 'workspaceId' | 'reviewId' | 'runId' | 'createdAt'>

function toComment(row: ReviewCommentsTable): ReviewComment {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    reviewId: row.review_id,
    path: row.path,
    startLine: row.start_line,
    endLine: row.end_line,
    body: row.body,
    quoted: row.quoted,
    commit: row.commit_sha,
    blob: row.blob_sha,
    runId: row.run_id,
    createdAt: row.created_at,
  }
}

export function createReviewCommentsRepository(context: RepositoryContext, userId: string) {
  const { db } = context
  return {
    /** Stores one review's comments together; returns them in the order given. */
    async add(workspaceId: string, comments: readonly NewReviewComment[]): Promise<ReviewComment[]> {
      const reviewId = newId('rev')
      const now = nowIso(context)
      const rows: ReviewCommentsTable[] = comments.map((comment) => ({
        id: newId('rvc'),
        user_id: userId,
        workspace_id: workspaceId,
        review_id: reviewId,
        path: comment.path,
        start_line: comment.startLine,
        end_line: comment.endLine,
        body: comment.body,
        quoted: comment.quoted,
        commit_sha: comment.commit,
        blob_sha: comment.blob,
        run_id: null,
        created_at: now,
      }))
      if (rows.length) await db.insertInto('review_comments').values(rows).execute()
      return rows.map(toComment)
    },
    /** Records the run a review started. */
    async markSent(reviewId: string, runId: string): Promise<void> {
      await db
        .updateTable('review_comments')
        .set({ run_id: runId })
        .where('review_id', '=', reviewId)
        .where('user_id', '=', userId)
        .execute()
    },
    /** A workspace's comments, oldest first. */
    async list(workspaceId: string): Promise<ReviewComment[]> {
      const rows = await db
        .selectFrom('review_comments')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('user_id', '=', userId)
        .orderBy('id')
        .execute()
      return rows.map(toComment)
    },
  }
}

export type ReviewCommentsRepository = ReturnType<typeof createReviewCommentsRepository>
