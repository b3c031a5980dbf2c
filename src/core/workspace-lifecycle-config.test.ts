// projects.<name>.workspace in hangar.yaml and a repository's .hangar/workspace.yaml: one schema, errors
// that name the file, line and key, and copy globs that stay inside the project.
import { describe, expect, it } from 'vitest'
import { type ConfigIssue, parseConfig, parseWorkspaceLifecycle } from './config.js'
import { AppError } from './errors.js'

function issuesOf(parse: () => unknown): ConfigIssue[] {
  try {
    parse()
  } catch (error) {
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).code).toBe('config_invalid')
    return (error as AppError).details?.issues as ConfigIssue[]
  }
  throw new Error('expected a config error')
}

describe('workspace lifecycle config', () => {
  it('parses projects.<name>.workspace with defaults', () => {
    const config = parseConfig(
      [
        'projects:',
        '  shop:',
        '    workspace:',
        '      copy: [".env*", "config/local.json"]',
        '      setup: npm ci',
        '      teardown: docker compose down',
        '      ports: 2',
        '  docs: { workspace: { setup: make } }',
      ].join('\n'),
    )
    expect(config.projects.shop?.workspace).toEqual({
      copy: ['.env*', 'config/local.json'],
      setup: 'npm ci',
      teardown: 'docker compose down',
      ports: 2,
    })
    expect(config.projects.docs?.workspace).toEqual({ copy: [], setup: 'make', ports: 0 })
    expect(parseConfig('').projects).toEqual({})
  })

  it('names the key of a wrong value, and the allowed keys of an unknown one', () => {
    const issues = issuesOf(() =>
      parseConfig(
        ['projects:', '  shop:', '    workspace:', '      ports: -1', '      setpu: make'].join('\n'),
        '/p/hangar.yaml',
      ),
    )
    expect(issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'projects.shop.workspace.ports', line: 4 }),
        expect.objectContaining({
          path: 'projects.shop.workspace.setpu',
          line: 5,
          message: 'unknown key "setpu"; expected one of: copy, setup, teardown, ports',
        }),
      ]),
    )
  })

  it('refuses absolute, ".." and .git globs, saying why', () => {
    const issues = issuesOf(() =>
      parseConfig(
        'projects:\n  shop:\n    workspace:\n      copy: ["/etc/passwd", "../secrets/.env", "a/../../b", ".git/config"]\n',
      ),
    )
    expect(issues.map((issue) => [issue.path, issue.message])).toEqual([
      [
        'projects.shop.workspace.copy[0]',
        '"/etc/passwd": an absolute path is refused: give a glob relative to the project, e.g. ".env*"',
      ],
      [
        'projects.shop.workspace.copy[1]',
        '"../secrets/.env": ".." is refused: copied files come from inside the project',
      ],
      [
        'projects.shop.workspace.copy[2]',
        '"a/../../b": ".." is refused: copied files come from inside the project',
      ],
      ['projects.shop.workspace.copy[3]', '".git/config": ".git" is refused: git metadata is never copied'],
    ])
  })

  it('parses .hangar/workspace.yaml with the same schema and file-and-line errors', () => {
    expect(parseWorkspaceLifecycle('setup: ./bootstrap.sh\nports: 1\n', '/r/.hangar/workspace.yaml')).toEqual(
      {
        copy: [],
        setup: './bootstrap.sh',
        ports: 1,
      },
    )
    expect(() => parseWorkspaceLifecycle('setup: make\nport: 3\n', '/r/.hangar/workspace.yaml')).toThrow(
      '/r/.hangar/workspace.yaml:2:1: port: unknown key "port"; expected one of: copy, setup, teardown, ports',
    )
    expect(() => parseWorkspaceLifecycle('setup: ""\n', '/r/.hangar/workspace.yaml')).toThrow(
      /setup: expected a shell command/,
    )
  })
})
