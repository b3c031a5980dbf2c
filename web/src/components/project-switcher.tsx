// The project in use, in the top bar: it filters the conversation list and is where a new conversation
// goes. Hidden while the daemon has no projects (or no projects API).
import { useProjects } from '../lib/use-projects'

export function ProjectSwitcher() {
  const { available, projects, chosen, choose } = useProjects()
  if (!available || projects.length === 0) return null
  return (
    <label className="project-switcher">
      <span className="visually-hidden">Project</span>
      <select
        aria-label="Project"
        value={chosen ?? ''}
        onChange={(event) => choose(event.target.value || null)}
      >
        {projects.length > 1 && <option value="">All projects</option>}
        {projects.map((project) => (
          <option key={project.id} value={project.id}>
            {project.name}
          </option>
        ))}
      </select>
    </label>
  )
}
