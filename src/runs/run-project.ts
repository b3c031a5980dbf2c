// Which `projects.<name>` settings of hangar.yaml apply to a run: its registered project's name, else (a run
// with no project, or one whose project was removed since) the daemon's own directory's; and the role of
// the user whose run it is (a project's sandbox default binds members).
import path from 'node:path'
import type { Store } from '../store/store.js'

export async function projectNameOfRun(
  store: Pick<Store, 'projects'>,
  run: { projectId?: string | null },
  projectDir: string,
): Promise<string> {
  const project = run.projectId ? await store.projects.get(run.projectId) : undefined
  return project?.name ?? path.basename(projectDir)
}

/** What decides a run's sandbox besides its profile: its project's name and its user's role. */
export async function sandboxContextOfRun(
  store: Pick<Store, 'projects' | 'users'>,
  run: { projectId?: string | null },
  userId: string,
  projectDir: string,
): Promise<{ project: string; role: 'owner' | 'member' }> {
  const [project, role] = await Promise.all([
    projectNameOfRun(store, run, projectDir),
    sandboxRoleOf(store, userId),
  ])
  return { project, role }
}

/** The role a run's sandbox is decided with: an unknown user gets the stricter reading (member). */
export async function sandboxRoleOf(
  store: Pick<Store, 'users'>,
  userId: string,
): Promise<'owner' | 'member'> {
  return (await store.users.findById(userId))?.role ?? 'member'
}
