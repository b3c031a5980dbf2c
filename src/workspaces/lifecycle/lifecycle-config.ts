// Which workspace lifecycle applies to a project: hangar.yaml's `projects.<name>.workspace` wins; else the
// repository's committed `.hangar/workspace.yaml`, but only once the owner approved that exact content
// (its SHA-256): the file runs commands on the host, and anyone who can commit could change it.
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { type HangarConfig, parseWorkspaceLifecycle } from '../../core/config.js'
import { AppError } from '../../core/errors.js'
import { WORKSPACE_FILE, type WorkspaceLifecycleConfig } from '../../core/workspace-lifecycle-schema.js'
import type { ConfigApproval } from '../../store/repositories/workspace-lifecycle-repository.js'

/** A project as the lifecycle sees it: its name (hangar.yaml's key, approvals) and source directory. */
export interface LifecycleProject {
  name: string
  dir: string
}

export interface RepositoryLifecycleFile {
  path: string
  contentHash: string
  approved: boolean
  approvedAt: string | null
  /** What it says, when it parses. */
  config: WorkspaceLifecycleConfig | null
  /** Why it does not parse, or null. */
  problem: string | null
}

export interface ResolvedLifecycle {
  project: string
  /** Where the lifecycle that applies comes from ('none': nothing applies). */
  source: 'hangar.yaml' | 'repository' | 'none'
  /** What applies: hangar.yaml's, or the approved repository file's; null when none. */
  config: WorkspaceLifecycleConfig | null
  /** The repository's `.hangar/workspace.yaml`, when it has one. */
  repositoryFile: RepositoryLifecycleFile | null
}

/** The project of the daemon as it is today (one per daemon): named after its directory. */
export function projectFromDirectory(dir: string, name?: string): LifecycleProject {
  return { name: name ?? path.basename(dir), dir }
}

export function contentHash(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

export async function resolveLifecycle(
  project: LifecycleProject,
  config: Pick<HangarConfig, 'projects'>,
  approval: (project: string) => Promise<ConfigApproval | undefined>,
): Promise<ResolvedLifecycle> {
  const file = path.join(project.dir, WORKSPACE_FILE)
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw new AppError('invalid_request', `cannot read ${file}: ${error.code ?? error.message}`)
  })
  let repositoryFile: RepositoryLifecycleFile | null = null
  if (text !== undefined) {
    const hash = contentHash(text)
    const approved = await approval(project.name)
    let parsed: WorkspaceLifecycleConfig | null = null
    let problem: string | null = null
    try {
      parsed = parseWorkspaceLifecycle(text, file)
    } catch (error) {
      if (!(error instanceof AppError)) throw error
      problem = error.message
    }
    const isApproved = approved?.contentHash === hash && parsed !== null
    repositoryFile = {
      path: file,
      contentHash: hash,
      approved: isApproved,
      approvedAt: isApproved ? approved!.approvedAt : null,
      config: parsed,
      problem,
    }
  }
  const configured = Object.hasOwn(config.projects, project.name)
    ? config.projects[project.name]?.workspace
    : undefined
  if (configured) return { project: project.name, source: 'hangar.yaml', config: configured, repositoryFile }
  if (repositoryFile?.approved)
    return { project: project.name, source: 'repository', config: repositoryFile.config, repositoryFile }
  return { project: project.name, source: 'none', config: null, repositoryFile }
}
