// The texts Hangar writes for agents and commits when reviewing and landing: one structured message per
// review (file, line range, quoted lines, comment), the prompt of a conflict-resolving run, and commit
// messages with the agents that did the work named in a trailer.

export interface QuotedComment {
  path: string
  startLine: number
  endLine: number
  quoted: string
  body: string
}

/** A fence longer than any run of backticks in the text, so quoted code cannot end it early. */
function fenceFor(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((match) => match[0].length))
  return '`'.repeat(longest + 1)
}

export function reviewMessage(comments: readonly QuotedComment[]): string {
  const parts = [
    `Review of your changes: ${comments.length} comment${comments.length === 1 ? '' : 's'}. Address each one in this workspace.`,
  ]
  comments.forEach((comment, index) => {
    const range =
      comment.startLine === comment.endLine
        ? `line ${comment.startLine}`
        : `lines ${comment.startLine}-${comment.endLine}`
    const fence = fenceFor(comment.quoted)
    parts.push(
      [
        `## ${index + 1}. ${comment.path}, ${range}`,
        `${fence}`,
        comment.quoted,
        `${fence}`,
        `Comment: ${comment.body}`,
      ].join('\n'),
    )
  })
  return parts.join('\n\n')
}

export function conflictPrompt(options: {
  into: string
  conflicts: readonly string[]
  targetCommits: readonly { sha: string; subject: string }[]
}): string {
  const commits = options.targetCommits.length
    ? options.targetCommits.map((commit) => `- ${commit.sha.slice(0, 12)} ${commit.subject}`).join('\n')
    : '- (none listed)'
  return [
    `Landing this workspace into branch ${options.into} conflicts in these files:`,
    options.conflicts.map((file) => `- ${file}`).join('\n') || '- (git named none)',
    `The commits on ${options.into} that this workspace does not have yet:`,
    commits,
    `Merge ${options.into} into this workspace's branch (git merge ${options.into}), resolve the conflicts in ` +
      'the files above keeping the intent of both sides, and commit the merge. If you cannot finish, run ' +
      'git merge --abort so that the workspace is not left half-merged.',
  ].join('\n\n')
}

/** `Agents: a, b` appended to a commit message, when any agent ran. */
export function withAgentsTrailer(message: string, agents: readonly string[]): string {
  if (!agents.length) return message
  return `${message.trimEnd()}\n\nAgents: ${agents.join(', ')}`
}
