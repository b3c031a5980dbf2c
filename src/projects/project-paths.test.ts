// Project names: made from a directory's name when none is given (valid, and unique among the taken ones),
// and refused with the rule spelled out when a given one does not fit it.
import { describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { assertProjectName, nameFromDirectory, PROJECT_NAME_PATTERN, uniqueName } from './project-paths.js'

describe('project names', () => {
  it('makes a valid name of any directory name', () => {
    expect(nameFromDirectory('/home/you/src/shop')).toBe('shop')
    expect(nameFromDirectory('/srv/my repo (old)')).toBe('my-repo-old')
    expect(nameFromDirectory('/srv/.dotfiles')).toBe('dotfiles')
    expect(nameFromDirectory('/srv/été')).toBe('t')
    expect(nameFromDirectory('/')).toBe('project')
    expect(nameFromDirectory(`/srv/${'a'.repeat(100)}`)).toHaveLength(64)
    for (const name of ['shop', 'my-repo-old', 'dotfiles', 't', 'project'])
      expect(PROJECT_NAME_PATTERN.test(name), name).toBe(true)
  })

  it('adds the first free suffix to a taken name, keeping it within 64 characters', async () => {
    const taken = new Set(['notes', 'notes-2', 'a'.repeat(64)])
    const isTaken = async (name: string) => taken.has(name)
    expect(await uniqueName('docs', isTaken)).toBe('docs')
    expect(await uniqueName('notes', isTaken)).toBe('notes-3')
    const long = await uniqueName('a'.repeat(64), isTaken)
    expect(long).toBe(`${'a'.repeat(62)}-2`)
  })

  it('refuses a name outside the rule, saying the rule', () => {
    for (const bad of ['', '-lead', 'has space', 'slash/y', 'a'.repeat(65)]) {
      const error = (() => {
        try {
          assertProjectName(bad)
        } catch (caught) {
          return caught
        }
      })()
      expect(error, bad).toBeInstanceOf(AppError)
      expect((error as AppError).code).toBe('invalid_request')
      expect((error as AppError).message).toContain('starting with a letter or digit, at most 64 characters')
    }
    expect(() => assertProjectName('Shop_2.0-x')).not.toThrow()
  })
})
