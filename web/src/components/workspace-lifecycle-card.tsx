// A project's workspace lifecycle on the Projects page (issue 20 item 5): where it comes from (hangar.yaml,
// or the repository's `.hangar/workspace.yaml` once the owner approved it), the files copied, the setup and
// teardown commands (shown as text, never run here), the ports. The owner approves an unapproved file after
// reading the exact commands; the approval names the hash of what was shown, so a file changed since is
// refused (409) and shown again. Members see the same panel without the button (the daemon refuses them too).
import { useState } from 'react'
import { api, ApiError } from '../lib/api'
import { formatWhen } from '../lib/format'
import type { Project, WorkspaceLifecycle, WorkspaceLifecycleConfig } from '../lib/types'
import { useResource } from '../lib/use-resource'
import {
  canApprove,
  commandsToApprove,
  formatCopies,
  formatPorts,
  lifecycleState,
  lifecycleSummary,
  shortHash,
  shownConfig,
} from '../lib/workspace-lifecycle'
import { useToast } from './toasts'

const STATE_BADGE: Record<ReturnType<typeof lifecycleState>, string> = {
  'hangar.yaml': 'badge-good',
  approved: 'badge-good',
  unapproved: 'badge-warn',
  invalid: 'badge-bad',
  none: 'badge-muted',
}

function Command({ command }: { command: string | undefined }) {
  return command ? (
    <pre className="lifecycle-command">
      <code>{command}</code>
    </pre>
  ) : (
    <span className="muted">none</span>
  )
}

function ConfigList({ config }: { config: WorkspaceLifecycleConfig }) {
  return (
    <dl className="lifecycle-config">
      <dt>Copied files</dt>
      <dd>
        <code>{formatCopies(config.copy)}</code>
      </dd>
      <dt>Setup</dt>
      <dd>
        <Command command={config.setup} />
      </dd>
      <dt>Teardown</dt>
      <dd>
        <Command command={config.teardown} />
      </dd>
      <dt>Ports</dt>
      <dd>{formatPorts(config.ports)}</dd>
    </dl>
  )
}

/** The owner's confirmation: the exact commands and the hash that the approval will name. */
function ApproveConfirmation({
  project,
  lifecycle,
  onApproved,
  onCancel,
}: {
  project: Project
  lifecycle: WorkspaceLifecycle
  onApproved: (approved: WorkspaceLifecycle) => void
  onCancel: (changed: boolean) => void
}) {
  const toast = useToast()
  const [busy, setBusy] = useState(false)
  const file = lifecycle.repositoryFile!
  const config = file.config!
  const commands = commandsToApprove(config)

  async function approve() {
    setBusy(true)
    try {
      const approved = await api<WorkspaceLifecycle>('POST', '/api/workspace-config/approve', {
        contentHash: file.contentHash,
        projectId: project.id,
      })
      toast.success(`Approved .hangar/workspace.yaml of ${project.name}`)
      onApproved(approved)
    } catch (error) {
      if (error instanceof ApiError && error.status === 409) {
        toast.error(`.hangar/workspace.yaml of ${project.name} changed since it was shown: review it again`)
        onCancel(true)
      } else toast.error(error)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div
      className="lifecycle-confirm"
      role="group"
      aria-label={`Confirm approving ${project.name}’s workspace file`}
    >
      <p>
        Approving lets these run with <code>sh -c</code> on the daemon’s host, in every new workspace of{' '}
        {project.name}:
      </p>
      {commands.length === 0 && <p className="muted">No commands: only files copied and ports given.</p>}
      {commands.map(({ label, command }) => (
        <div key={label}>
          <span className="small muted">{label}</span>
          <Command command={command} />
        </div>
      ))}
      <p className="small muted">
        Copied files: <code>{formatCopies(config.copy)}</code> · ports: {formatPorts(config.ports)} · file
        hash <code title={file.contentHash}>{shortHash(file.contentHash)}</code>
      </p>
      <div className="row">
        <button type="button" className="button primary" disabled={busy} onClick={() => void approve()}>
          {busy ? 'Approving…' : 'Approve these commands'}
        </button>
        <button type="button" className="button ghost" disabled={busy} onClick={() => onCancel(false)}>
          Cancel
        </button>
      </div>
    </div>
  )
}

export function WorkspaceLifecycleCard({ project, isOwner }: { project: Project; isOwner: boolean }) {
  const resource = useResource<WorkspaceLifecycle>(
    `/api/workspace-config?projectId=${encodeURIComponent(project.id)}`,
  )
  const [approved, setApproved] = useState<WorkspaceLifecycle>()
  const [confirming, setConfirming] = useState(false)
  // Open by itself while a file waits for approval; after that, as the reader left it.
  const [open, setOpen] = useState<boolean>()
  const lifecycle = approved ?? resource.data

  if (!lifecycle) {
    return (
      <p className="small muted lifecycle-summary">
        Workspace:{' '}
        {resource.error ? (
          <span className="field-error" role="alert">
            {resource.error instanceof Error ? resource.error.message : String(resource.error)}
          </span>
        ) : (
          'loading…'
        )}
      </p>
    )
  }
  const state = lifecycleState(lifecycle)
  const shown = shownConfig(lifecycle)
  const file = lifecycle.repositoryFile

  return (
    <details
      className="workspace-lifecycle"
      aria-label={`Workspace of ${project.name}`}
      open={open ?? state === 'unapproved'}
      onToggle={(event) => setOpen(event.currentTarget.open)}
    >
      <summary className="small">
        Workspace: <span className={`badge ${STATE_BADGE[state]}`}>{lifecycleSummary(lifecycle)}</span>
      </summary>
      {shown && !shown.applies && (
        <p className="field-warning" role="note">
          What the repository asks for — not approved: its commands do not run until the owner approves them.
        </p>
      )}
      {shown && <ConfigList config={shown.config} />}
      {file && (
        <p className="small muted">
          <code>{file.path}</code> · hash <code title={file.contentHash}>{shortHash(file.contentHash)}</code>{' '}
          ·{' '}
          {file.approved
            ? `approved ${file.approvedAt ? formatWhen(file.approvedAt) : ''}`
            : state === 'hangar.yaml'
              ? 'not used: hangar.yaml sets this project’s workspace'
              : 'not approved'}
        </p>
      )}
      {file?.problem && (
        <p className="field-error" role="alert">
          {file.problem}
        </p>
      )}
      {isOwner &&
        canApprove(lifecycle) &&
        (confirming ? (
          <ApproveConfirmation
            project={project}
            lifecycle={lifecycle}
            onApproved={(next) => {
              setApproved(next)
              setConfirming(false)
            }}
            onCancel={(changed) => {
              setConfirming(false)
              if (changed) {
                setApproved(undefined)
                void resource.reload()
              }
            }}
          />
        ) : (
          <button type="button" className="button small-button" onClick={() => setConfirming(true)}>
            Approve…
          </button>
        ))}
    </details>
  )
}
