// Which `projects.<name>` settings of hangar.yaml apply to a run: its registered project's name, else (a run
// with no project, or one whose project was removed since) the daemon's own directory's.
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
