import { describe, expect, it } from 'vitest'
import { parseConfig } from './config.js'
import { withDefaultSandbox } from './sandbox-schema.js'

describe('sandbox settings in hangar.yaml', () => {
  it('takes sandbox, sandboxPaths and sandboxHosts per profile and a default per project', () => {
    const config = parseConfig(
      [
        'projects:',
        '  shop: { sandbox: workspace }',
        'agents:',
        '  boxed:',
        '    adapter: claude-code',
        '    sandbox: workspace',
        '    sandboxPaths: { readOnly: [/opt/sdk], writable: [~/.cache/pip] }',
        '    sandboxHosts: [registry.npmjs.org, "*.pypi.org", "mirror.example.com:8443"]',
        '  open: { adapter: codex }',
      ].join('\n'),
    )
    expect(config.projects.shop?.sandbox).toBe('workspace')
    expect(config.agents.boxed).toMatchObject({
      sandbox: 'workspace',
      sandboxPaths: { readOnly: ['/opt/sdk'], writable: ['~/.cache/pip'] },
      sandboxHosts: ['registry.npmjs.org', '*.pypi.org', 'mirror.example.com:8443'],
    })
    // An existing profile keeps what it had: no key, no sandbox (unless its project says otherwise).
    expect(config.agents.open?.sandbox).toBeUndefined()
  })

  it.each([
    ['    sandbox: container', /agents\.a\.sandbox: expected "off" or "workspace"/],
    [
      '    sandboxPaths: { readOnly: [relative/dir] }',
      /agents\.a\.sandboxPaths\.readOnly\[0\]: "relative\/dir" is not absolute/,
    ],
    [
      '    sandboxPaths: { writable: [/srv/../etc] }',
      /agents\.a\.sandboxPaths\.writable\[0\]: .*"\.\." is refused/,
    ],
    ['    sandboxPaths: { writable: [/] }', /the whole root or home cannot be writable/],
    ['    sandboxPaths: { hidden: [/x] }', /agents\.a\.sandboxPaths\.hidden/],
    [
      '    sandboxHosts: ["http://evil.example"]',
      /^hangar\.yaml:4:\d+: agents\.a\.sandboxHosts\[0\]: expected a host name/,
    ],
  ])('refuses %s with file, line and key path', (line, expected) => {
    expect(() => parseConfig(`agents:\n  a:\n    adapter: claude-code\n${line}\n`, 'hangar.yaml')).toThrow(
      expected,
    )
  })
})

describe('the sandbox of a profile saved through the UI or API', () => {
  it('is workspace for a new profile that names none, and what it names otherwise', () => {
    expect(
      withDefaultSandbox(
        { adapter: 'codex' } as { adapter: string; sandbox?: 'off' | 'workspace' },
        undefined,
      ),
    ).toEqual({
      adapter: 'codex',
      sandbox: 'workspace',
    })
    expect(withDefaultSandbox({ sandbox: 'off' as const }, undefined)).toEqual({ sandbox: 'off' })
  })

  it('keeps what a stored profile had when a full replace leaves the key out', () => {
    expect(withDefaultSandbox({}, { sandbox: 'workspace' })).toEqual({ sandbox: 'workspace' })
    expect(withDefaultSandbox({}, { sandbox: 'off' })).toEqual({ sandbox: 'off' })
    // Saved before sandboxes existed: still no key, so still its project's default (else off).
    expect(withDefaultSandbox({}, {})).toEqual({})
    expect(withDefaultSandbox({}, { sandbox: 'container' })).toEqual({})
    // A replace that names one wins over the stored one.
    expect(withDefaultSandbox({ sandbox: 'off' as const }, { sandbox: 'workspace' })).toEqual({
      sandbox: 'off',
    })
  })

  it('refuses sandbox: workspace with proxy: false and no allowed hosts, where it is written', () => {
    expect(() =>
      parseConfig('agents:\n  a: { adapter: codex, sandbox: workspace, proxy: false }\n', 'hangar.yaml'),
    ).toThrow(
      /agents\.a\.sandbox: .*proxy: false: a sandboxed agent reaches only Hangar's proxy.*set sandbox: off/,
    )
    // With a host to reach, or unsandboxed, or the built-in agent (its model calls are the daemon's): fine.
    for (const line of [
      'a: { adapter: codex, sandbox: workspace, proxy: false, sandboxHosts: [api.openai.com] }',
      'a: { adapter: codex, sandbox: off, proxy: false }',
      'a: { adapter: builtin, sandbox: workspace, proxy: false }',
    ])
      expect(() => parseConfig(`agents:\n  ${line}\n`)).not.toThrow()
  })
})
