import { Validator } from '@seriousme/openapi-schema-validator'
import { afterEach, describe, expect, it } from 'vitest'
import { openTestApp, type TestApp } from '../../test/helpers/test-runtime.js'
import { createOpenApiDocument } from './openapi.js'

describe('openapi', () => {
  let testApp: TestApp | undefined
  afterEach(async () => {
    await testApp?.testStore.dispose()
  })

  it('serves a well-formed OpenAPI 3.1 document and a readable reference without credentials', async () => {
    testApp = await openTestApp()
    const response = await testApp.app.request('http://localhost/api/openapi.json')
    expect(response.status).toBe(200)
    const document = (await response.json()) as {
      openapi: string
      info: { version: string }
      paths: Record<
        string,
        Record<
          string,
          {
            operationId: string
            responses: Record<string, unknown>
            parameters?: { name: string; in: string }[]
            requestBody?: { content: { 'application/json': { schema: { type: string } } } }
          }
        >
      >
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }
    }
    expect(document.openapi).toBe('3.1.0')
    expect(document.components.schemas.Error).toBeDefined()
    const operationIds = new Set<string>()
    for (const [route, operations] of Object.entries(document.paths)) {
      expect(route.startsWith('/api/')).toBe(true)
      const parameterNames = [...route.matchAll(/\{(\w+)\}/g)].map((match) => match[1])
      for (const operation of Object.values(operations)) {
        expect(operation.responses.default, route).toBeDefined()
        expect(operationIds.has(operation.operationId), operation.operationId).toBe(false)
        operationIds.add(operation.operationId)
        expect(
          (operation.parameters ?? [])
            .filter((parameter) => parameter.in === 'path')
            .map((parameter) => parameter.name),
        ).toEqual(parameterNames)
        if (operation.requestBody)
          expect(operation.requestBody.content['application/json'].schema.type).toBe('object')
      }
    }
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining(['/api/runs', '/api/runs/{id}/events', '/api/actions/{id}/confirm']),
    )
    // Review and land, and compare attempts (issue 22).
    const methodsOf = (route: string) => Object.keys(document.paths[route] ?? {}).sort()
    expect(methodsOf('/api/workspaces/{id}/diff')).toEqual(['get'])
    expect(methodsOf('/api/workspaces/{id}/review')).toEqual(['get', 'post'])
    expect(methodsOf('/api/workspaces/{id}/land')).toEqual(['post'])
    expect(methodsOf('/api/workspaces/{id}/resolve-conflicts')).toEqual(['post'])
    expect(methodsOf('/api/attempts')).toEqual(['get', 'post'])
    expect(methodsOf('/api/attempts/{id}')).toEqual(['get'])
    expect(methodsOf('/api/attempts/{id}/pick')).toEqual(['post'])
    expect(
      document.paths['/api/workspaces/{id}/diff']!.get!.parameters!.map((parameter) => parameter.name),
    ).toEqual(['id', 'base', 'stat'])
    const landBody = document.paths['/api/workspaces/{id}/land']!.post!.requestBody!.content[
      'application/json'
    ].schema as unknown as { properties: Record<string, unknown> }
    expect(Object.keys(landBody.properties)).toEqual(
      expect.arrayContaining(['into', 'strategy', 'message', 'removeWorkspace']),
    )
    expect(document.components.schemas.ReviewComment).toMatchObject({
      properties: { outdated: { type: 'boolean' } },
    })
    const runBody = document.paths['/api/runs']!.post!.requestBody!.content['application/json']
      .schema as unknown as {
      required: string[]
      additionalProperties: boolean
    }
    expect(runBody.required).toEqual(['prompt'])
    expect(
      document.paths['/api/usage']!.get!.parameters!.map((parameter) => [parameter.name, parameter.in]),
    ).toEqual([
      ['from', 'query'],
      ['to', 'query'],
      ['groupBy', 'query'],
    ])
    const docs = await testApp.app.request('http://localhost/api/docs')
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain('/api/conversations/{id}/messages')
  })

  it('validates against the official OpenAPI 3.1 JSON Schema', async () => {
    const validator = new Validator()
    const result = await validator.validate(createOpenApiDocument('1.2.3'))
    expect(validator.version).toBe('3.1')
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it('the validator used above rejects a malformed document (so the check can fail)', async () => {
    const document = createOpenApiDocument('1.2.3') as { paths: Record<string, Record<string, unknown>> }
    document.paths['/api/runs']!.post = { responses: 'none' }
    const result = await new Validator().validate(document)
    expect(result.valid).toBe(false)
  })
})
