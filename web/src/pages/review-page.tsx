// A conversation's workspace under review: its changed files (uncommitted ones marked), each file's diff
// with the new side's line numbers, comments on lines collected into one review and sent to the agent,
// and Land, which merges (or squashes, or rebases) the work into the branch it came from. Comments already
// sent stay next to their lines, marked "outdated" once the lines under them changed (the page reloads as
// runs end, so the agent's follow-up shows).
import { Fragment, useCallback, useEffect, useRef, useState } from 'react'
import { useToast } from '../components/toasts'
import { useActivity } from '../lib/activity'
import { api } from '../lib/api'
import { Link } from '../lib/router'
import type { ConversationDetail } from '../lib/types'
import { useResource } from '../lib/use-resource'

interface ChangedFile {
  path: string
  status: string
  additions: number
  deletions: number
  uncommitted: boolean
  patch?: string
}
interface ChangeSetView {
  workspaceId: string
  base: string
  files: ChangedFile[]
  commits: { sha: string; subject: string }[]
}
interface Draft {
  path: string
  startLine: number
  endLine: number
  body: string
}
interface StoredComment extends Draft {
  id: string
  createdAt: string
  outdated: boolean
}
interface DiffLine {
  text: string
  kind: 'add' | 'del' | 'ctx' | 'hunk'
  /** The line's number in the file as it is now (absent for removed lines and hunk headers). */
  line?: number
}

function CommentNote({ comment }: { comment: StoredComment }) {
  const lines =
    comment.startLine === comment.endLine
      ? `line ${comment.startLine}`
      : `lines ${comment.startLine}-${comment.endLine}`
  return (
    <div
      className="review-comment"
      role="note"
      aria-label={`Comment on ${comment.path} ${lines}`}
      data-outdated={comment.outdated ? 'true' : undefined}
    >
      <span className="small muted">
        {comment.path}, {lines}
      </span>{' '}
      {comment.outdated && <span className="badge badge-warn">outdated</span>} {comment.body}
    </div>
  )
}

/** The patch's body lines, each with its new-side line number. */
export function diffLines(patch: string): DiffLine[] {
  const out: DiffLine[] = []
  let line = 0
  let inHunk = false
  for (const text of patch.split('\n')) {
    const hunk = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(text)
    if (hunk) {
      line = Number(hunk[1])
      inHunk = true
      out.push({ text, kind: 'hunk' })
    } else if (!inHunk || text === '' || text.startsWith('\\')) continue
    else if (text.startsWith('+')) out.push({ text, kind: 'add', line: line++ })
    else if (text.startsWith('-')) out.push({ text, kind: 'del' })
    else out.push({ text, kind: 'ctx', line: line++ })
  }
  return out
}

export function ReviewPage({ id }: { id: string }) {
  const toast = useToast()
  const conversation = useResource<ConversationDetail>(`/api/conversations/${encodeURIComponent(id)}`)
  const workspaceId = conversation.data?.workspaceId ?? null
  const [diff, setDiff] = useState<ChangeSetView>()
  const [comments, setComments] = useState<StoredComment[]>([])
  const [selected, setSelected] = useState<{ path: string; startLine: number; endLine: number }>()
  const [body, setBody] = useState('')
  const [drafts, setDrafts] = useState<Draft[]>([])
  const [strategy, setStrategy] = useState('merge')
  const [landed, setLanded] = useState<string>()

  // Loads overlap (a run ending while a land answers): only the latest one's answers are shown.
  const latestLoad = useRef(0)
  const load = useCallback(() => {
    if (!workspaceId) return
    const current = ++latestLoad.current
    const fresh = () => current === latestLoad.current
    const base = `/api/workspaces/${encodeURIComponent(workspaceId)}`
    api<ChangeSetView>('GET', `${base}/diff`).then((result) => fresh() && setDiff(result), toast.error)
    api<{ comments: StoredComment[] }>('GET', `${base}/review`).then(
      (result) => fresh() && setComments(result.comments),
      toast.error,
    )
  }, [workspaceId, toast])
  useEffect(load, [load])
  useActivity(() => load())

  const pick = (path: string, line: number, extend: boolean) =>
    setSelected((current) =>
      extend && current?.path === path
        ? { path, startLine: Math.min(current.startLine, line), endLine: Math.max(current.endLine, line) }
        : { path, startLine: line, endLine: line },
    )

  async function send() {
    try {
      const sent = await api<{ run: { id: string } }>(
        'POST',
        `/api/workspaces/${encodeURIComponent(workspaceId!)}/review`,
        { comments: drafts },
      )
      setDrafts([])
      load()
      toast.success(`Review sent; the agent answers in run ${sent.run.id}`)
    } catch (error) {
      toast.error(error)
    }
  }

  async function land() {
    try {
      const result = await api<{ into: string; commit: string }>(
        'POST',
        `/api/workspaces/${encodeURIComponent(workspaceId!)}/land`,
        { strategy },
      )
      setLanded(`Landed into ${result.into} at ${result.commit.slice(0, 12)}`)
      load()
    } catch (error) {
      toast.error(error)
    }
  }

  if (conversation.data && !workspaceId)
    return (
      <div className="page">
        <h1>Review</h1>
        <p className="muted">This conversation has no workspace yet: send it a message first.</p>
      </div>
    )
  return (
    <div className="page review-page">
      <header className="page-head">
        <h1>Review: {conversation.data?.title ?? id}</h1>
        <span className="grow" />
        <Link to={`/conversations/${encodeURIComponent(id)}`}>Back to the conversation</Link>
      </header>
      {diff && (
        <>
          <nav aria-label="Changed files">
            <ul>
              {diff.files.map((file) => (
                <li key={file.path}>
                  <a href={`#file-${file.path}`}>
                    {file.status} {file.path}
                  </a>{' '}
                  <span className="muted small">
                    +{file.additions} -{file.deletions}
                    {file.uncommitted ? ' · uncommitted' : ''}
                  </span>
                </li>
              ))}
            </ul>
          </nav>
          {diff.files.map((file) => {
            const rows = diffLines(file.patch ?? '')
            // Where each new-side line first shows: a comment goes under its last line, once.
            const firstRow = new Map<number, number>()
            rows.forEach((row, index) => {
              if (row.line !== undefined && !firstRow.has(row.line)) firstRow.set(row.line, index)
            })
            const onFile = comments.filter((comment) => comment.path === file.path)
            const placed = onFile.filter((comment) => firstRow.has(comment.endLine))
            return (
              <section key={file.path} id={`file-${file.path}`} aria-label={`Diff of ${file.path}`}>
                <h2 className="small">{file.path}</h2>
                <pre className="diff">
                  {rows.map((row, index) => {
                    const isSelected =
                      row.line !== undefined &&
                      selected?.path === file.path &&
                      row.line >= selected.startLine &&
                      row.line <= selected.endLine
                    const here =
                      row.line !== undefined && firstRow.get(row.line) === index
                        ? placed.filter((comment) => comment.endLine === row.line)
                        : []
                    return (
                      <Fragment key={index}>
                        <div
                          className={`diff-${row.kind}${isSelected ? ' selected' : ''}`}
                          data-line={row.line}
                          aria-label={row.line !== undefined ? `${file.path} line ${row.line}` : undefined}
                          role={row.line !== undefined ? 'button' : undefined}
                          onClick={(event) =>
                            row.line !== undefined && pick(file.path, row.line, event.shiftKey)
                          }
                        >
                          <span className="muted">{String(row.line ?? '').padStart(4)} </span>
                          {row.text}
                        </div>
                        {here.map((comment) => (
                          <CommentNote key={comment.id} comment={comment} />
                        ))}
                      </Fragment>
                    )
                  })}
                </pre>
                {onFile
                  .filter((comment) => !placed.includes(comment))
                  .map((comment) => (
                    <CommentNote key={comment.id} comment={comment} />
                  ))}
              </section>
            )
          })}
          {comments.some((comment) => !diff.files.some((file) => file.path === comment.path)) && (
            <section aria-label="Comments on files without changes">
              <h2 className="small">Comments on files without changes</h2>
              {comments
                .filter((comment) => !diff.files.some((file) => file.path === comment.path))
                .map((comment) => (
                  <CommentNote key={comment.id} comment={comment} />
                ))}
            </section>
          )}
          {selected && (
            <div role="group" aria-label="New comment">
              <p className="small">
                {selected.path}, lines {selected.startLine}-{selected.endLine}
              </p>
              <textarea aria-label="Comment" value={body} onChange={(event) => setBody(event.target.value)} />
              <button
                type="button"
                className="button"
                disabled={!body.trim()}
                onClick={() => {
                  setDrafts((current) => [...current, { ...selected, body: body.trim() }])
                  setBody('')
                  setSelected(undefined)
                }}
              >
                Add comment
              </button>
            </div>
          )}
          {drafts.length > 0 && (
            <div role="group" aria-label="Review">
              <ul>
                {drafts.map((draft, index) => (
                  <li key={index}>
                    {draft.path}:{draft.startLine}-{draft.endLine} — {draft.body}
                  </li>
                ))}
              </ul>
              <button type="button" className="button" onClick={() => void send()}>
                Send review ({drafts.length})
              </button>
            </div>
          )}
          <div role="group" aria-label="Land">
            <select
              aria-label="Strategy"
              value={strategy}
              onChange={(event) => setStrategy(event.target.value)}
            >
              <option value="merge">merge</option>
              <option value="squash">squash</option>
              <option value="rebase">rebase</option>
            </select>
            <button type="button" className="button" onClick={() => void land()}>
              Land
            </button>
            {landed && <p role="status">{landed}</p>}
          </div>
        </>
      )}
    </div>
  )
}
