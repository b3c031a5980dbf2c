// The daemon's projects and the one chosen in the switcher, shared by the shell and every page. The choice
// is kept in localStorage (per browser). A daemon that has no /api/projects (404) has no projects: the
// switcher hides and nothing is filtered.
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react'
import { api, ApiError } from './api'
import { chosenProject, PROJECT_STORAGE_KEY, projectNameOf } from './projects'
import type { Project, ProjectsResponse } from './types'

export interface ProjectsContextValue {
  /** False until loaded, and when the daemon has no projects API. */
  available: boolean
  projects: Project[]
  /** The project in use, or null for all projects. */
  chosen: string | null
  choose: (projectId: string | null) => void
  reload: () => Promise<void>
  nameOf: (projectId: string | null | undefined) => string | undefined
}

const ProjectsContext = createContext<ProjectsContextValue>({
  available: false,
  projects: [],
  chosen: null,
  choose: () => {},
  reload: async () => {},
  nameOf: () => undefined,
})

function readStored(): string | null {
  try {
    return window.localStorage.getItem(PROJECT_STORAGE_KEY)
  } catch {
    return null
  }
}

export function ProjectsProvider({ children }: { children: ReactNode }) {
  const [available, setAvailable] = useState(false)
  const [projects, setProjects] = useState<Project[]>([])
  const [stored, setStored] = useState<string | null>(readStored)

  const reload = useCallback(async () => {
    try {
      const response = await api<ProjectsResponse>('GET', '/api/projects')
      setProjects(response.projects ?? [])
      setAvailable(true)
    } catch (error) {
      // A daemon without projects: none, and no switcher. Other failures keep what was loaded.
      if (error instanceof ApiError && error.status === 404) {
        setProjects([])
        setAvailable(false)
      }
    }
  }, [])
  useEffect(() => void reload(), [reload])

  const choose = useCallback((projectId: string | null) => {
    setStored(projectId)
    try {
      if (projectId) window.localStorage.setItem(PROJECT_STORAGE_KEY, projectId)
      else window.localStorage.removeItem(PROJECT_STORAGE_KEY)
    } catch {
      // Storage refused (private mode): the choice lasts until the tab closes.
    }
  }, [])

  const value = useMemo<ProjectsContextValue>(
    () => ({
      available,
      projects,
      chosen: chosenProject(stored, projects),
      choose,
      reload,
      nameOf: (projectId) => projectNameOf(projectId, projects),
    }),
    [available, projects, stored, choose, reload],
  )
  return <ProjectsContext.Provider value={value}>{children}</ProjectsContext.Provider>
}

export function useProjects(): ProjectsContextValue {
  return useContext(ProjectsContext)
}
