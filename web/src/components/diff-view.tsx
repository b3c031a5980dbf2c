// A unified diff, coloured by line: additions, deletions and hunk headers. Long diffs scroll inside.
export function DiffView({ diff, label }: { diff: string; label?: string }) {
  const lines = diff.replace(/\n$/, '').split('\n')
  return (
    <pre className="diff" aria-label={label ?? 'diff'} tabIndex={0}>
      {lines.map((line, index) => {
        const kind =
          line.startsWith('+++') || line.startsWith('---')
            ? 'file'
            : line.startsWith('@@')
              ? 'hunk'
              : line.startsWith('+')
                ? 'add'
                : line.startsWith('-')
                  ? 'del'
                  : 'ctx'
        return (
          <span key={index} className={`diff-${kind}`}>
            {line + '\n'}
          </span>
        )
      })}
    </pre>
  )
}
