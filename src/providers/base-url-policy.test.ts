import { describe, expect, it } from 'vitest'
import { AppError } from '../core/errors.js'
import { checkProviderBaseUrl } from './base-url-policy.js'

function refusal(url: string, allowLocal: boolean): AppError | undefined {
  try {
    checkProviderBaseUrl(url, { allowLocal })
    return undefined
  } catch (error) {
    if (error instanceof AppError) return error
    throw error
  }
}

describe('base-url-policy', () => {
  it.each([
    'https://api.anthropic.com',
    'https://openrouter.ai/api/v1',
    'http://8.8.8.8:8080/v1',
    'https://[2606:4700::1111]/v1',
    'https://llm.example.com/v1',
  ])('accepts the public address %s', (url) => {
    expect(refusal(url, false)).toBeUndefined()
  })

  it.each(['ftp://example.com', 'file:///etc/passwd', 'gopher://example.com', 'not a url'])(
    'refuses %s as not an http(s) URL',
    (url) => {
      expect(refusal(url, true)?.code).toBe('invalid_request')
    },
  )

  it.each([
    'http://169.254.169.254/latest/meta-data',
    'http://169.254.1.1',
    'http://[fe80::1]/',
    'http://[febf::1]/',
    'http://metadata.google.internal/computeMetadata/v1',
    'http://METADATA.google.internal./',
    'http://100.100.100.200/',
    'http://[fd00:ec2::254]/',
    // The same metadata address in the spellings the URL parser normalizes.
    'http://2852039166/',
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://[::ffff:169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
  ])('refuses the link-local or metadata address %s even when local providers are allowed', (url) => {
    const error = refusal(url, true)
    expect(error?.code).toBe('invalid_request')
    expect(error?.message).toContain('metadata')
  })

  it.each([
    'http://127.0.0.1:11434/v1',
    'http://127.8.9.10/',
    'http://10.0.0.5/',
    'http://172.16.0.1/',
    'http://172.31.255.255/',
    'http://192.168.1.20:1234/v1',
    'http://[::1]:8000/v1',
    'http://[fc00::1]/',
    'http://[fd12:3456::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://localhost:11434/v1',
    'http://LOCALHOST./',
    'http://ollama.localhost/',
    'http://0.0.0.0:8000/',
    'http://2130706433/',
  ])('refuses the loopback or private address %s unless local providers are allowed', (url) => {
    expect(refusal(url, false)?.code).toBe('invalid_request')
    expect(refusal(url, true)).toBeUndefined()
  })

  it('treats 172.32.0.1 and 192.169.0.1 as public', () => {
    expect(refusal('http://172.32.0.1/', false)).toBeUndefined()
    expect(refusal('http://192.169.0.1/', false)).toBeUndefined()
  })

  it('refuses credentials in the URL without echoing them', () => {
    const error = refusal('https://user:sk-secret@api.example.com/v1', true)
    expect(error?.code).toBe('invalid_request')
    expect(JSON.stringify({ message: error?.message, details: error?.details })).not.toContain('sk-secret')
  })
})
