import { describe, expect, it } from 'vitest'
import { chosenProject, fileLocation, inProject, projectForNew, projectNameOf } from './projects'
import type { Project } from './types'

const project = (id: string, name = id): Project => ({
  id,
  name,
  path: `/srv/${name}`,
  kind: 'git',
  defaultAgent: null,
  createdAt: '2026-11-26T00:00:00.000Z',
})
const shop = project('prj_shop', 'shop')
const blog = project('prj_blog', 'blog')

describe('project switcher state', () => {
  it('keeps the stored choice while that project exists', () => {
    expect(chosenProject('prj_blog', [shop, blog])).toBe('prj_blog')
  })

  it('falls back to all projects when the stored one was removed, or to the only one', () => {
    expect(chosenProject('prj_gone', [shop, blog])).toBeNull()
    expect(chosenProject(null, [shop, blog])).toBeNull()
    expect(chosenProject('prj_gone', [shop])).toBe('prj_shop')
    expect(chosenProject(null, [])).toBeNull()
  })

  it('filters a list by the chosen project, and shows everything with none chosen', () => {
    const items = [{ projectId: 'prj_shop' }, { projectId: 'prj_blog' }, { projectId: null }, {}]
    expect(items.filter((item) => inProject(item, 'prj_shop'))).toEqual([{ projectId: 'prj_shop' }])
    expect(items.filter((item) => inProject(item, null))).toHaveLength(4)
  })

  it('creates a conversation in the chosen project, the only one, or asks when there are several', () => {
    expect(projectForNew('prj_blog', [shop, blog])).toBe('prj_blog')
    expect(projectForNew(null, [shop])).toBe('prj_shop')
    expect(projectForNew(null, [shop, blog])).toBeNull()
    expect(projectForNew('prj_gone', [shop, blog])).toBeNull()
    expect(projectForNew(null, [])).toBeNull()
  })

  it("names an item's project, and where an approval's file lives", () => {
    expect(projectNameOf('prj_shop', [shop, blog])).toBe('shop')
    expect(projectNameOf('prj_gone', [shop])).toBeUndefined()
    expect(projectNameOf(null, [shop])).toBeUndefined()
    expect(fileLocation('shop', 'src/a.ts')).toBe('shop: src/a.ts')
    expect(fileLocation(undefined, 'src/a.ts')).toBe('src/a.ts')
    expect(fileLocation('shop', undefined)).toBe('shop')
  })
})
