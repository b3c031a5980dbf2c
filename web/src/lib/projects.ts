// The project switcher's state, kept pure so it is unit-tested: which project is in use (the stored choice
// while it still exists, else the only one), what a list shows under it, and which project a new
// conversation goes to. A daemon without projects (404 on /api/projects) counts as having none.
import type { Project } from './types'

/** localStorage key of the chosen project id ('' or absent: all projects). */
export const PROJECT_STORAGE_KEY = 'hangar.project'

/** The project in use: the stored one while it exists, the only one when there is one, else none (all). */
export function chosenProject(
  stored: string | null | undefined,
  projects: readonly Project[],
): string | null {
  if (stored && projects.some((project) => project.id === stored)) return stored
  return projects.length === 1 ? projects[0]!.id : null
}

/** Whether an item shows under the chosen project (everything shows when none is chosen). */
export function inProject(item: { projectId?: string | null }, chosen: string | null): boolean {
  return chosen === null || item.projectId === chosen
}

/**
 * The project a new conversation is created in: the chosen one; with none chosen, the only one. Null when
 * the user must pick (several projects) or there is nothing to pick (none: the daemon's own project).
 */
export function projectForNew(chosen: string | null, projects: readonly Project[]): string | null {
  if (chosen && projects.some((project) => project.id === chosen)) return chosen
  return projects.length === 1 ? projects[0]!.id : null
}

/** The project's name for a card or row; undefined when it has none or it is not (any longer) listed. */
export function projectNameOf(
  projectId: string | null | undefined,
  projects: readonly Project[],
): string | undefined {
  if (!projectId) return undefined
  return projects.find((project) => project.id === projectId)?.name
}

/** Where an approval's file lives: `project: path` (the project's folder name when it is not listed). */
export function fileLocation(
  projectName: string | undefined,
  filePath: string | undefined,
): string | undefined {
  if (!filePath) return projectName
  return projectName ? `${projectName}: ${filePath}` : filePath
}
