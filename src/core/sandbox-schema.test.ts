import { describe, expect, it } from 'vitest'
import { parseConfig } from './config.js'

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
