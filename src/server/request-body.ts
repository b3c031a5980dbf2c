// Reading a JSON body: size-limited (JSON 413), must be UTF-8 and JSON (400 invalid_json), validated by
// zod (400 invalid_request naming each bad field).
import type { Context } from 'hono'
import type { z } from 'zod'
import { dotted } from '../core/config.js'
import { AppError } from '../core/errors.js'

export async function readJsonBody<Schema extends z.ZodType>(
  context: Context,
  schema: Schema,
): Promise<z.output<Schema>> {
  // The API reads bodies as sent: a compressed one would be parsed as garbage, or a claimed coding
  // ignored. (The LLM proxy, which carries large histories, decodes its own.)
  const coding = context.req.header('content-encoding')?.trim().toLowerCase()
  if (coding && coding !== 'identity') {
    throw new AppError('unsupported_media_type', `the API does not accept Content-Encoding "${coding}"`, {
      hint: 'send the JSON body uncompressed, without a Content-Encoding header',
    })
  }
  const text = decodeUtf8(new Uint8Array(await context.req.arrayBuffer()))
  if (text === undefined) throw notUtf8()
  let value: unknown
  try {
    value = text.trim() === '' ? {} : JSON.parse(text)
  } catch {
    throw new AppError('invalid_json', 'the request body is not valid JSON', {
      hint: 'send a JSON object with Content-Type: application/json',
    })
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const fields = parsed.error.issues.flatMap((issue) => {
      const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)))
      // zod reports unknown keys on the object that holds them; name each key as the field.
      const paths = issue.code === 'unrecognized_keys' ? issue.keys.map((key) => [...path, key]) : [path]
      // `feeds[0].source`, as hangar.yaml's issues and the profile checks name a key.
      return paths.map((segments) => ({ path: dotted(segments) || '(body)', message: issue.message }))
    })
    const first = fields[0]!
    throw new AppError('invalid_request', `${first.path}: ${first.message}`, { details: { fields } })
  }
  return parsed.data
}

/**
 * The body as text, or undefined when it is not valid UTF-8. Decoding leniently would put U+FFFD where
 * the bad bytes were and store or act on a value the client never sent.
 */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

export function notUtf8(): AppError {
  return new AppError('invalid_json', 'the request body is not valid UTF-8', {
    hint: 'send the JSON encoded as UTF-8',
  })
}

export function payloadTooLarge(limitBytes: number): AppError {
  return new AppError('payload_too_large', `the request body is larger than ${formatBytes(limitBytes)}`, {
    details: { limitBytes },
  })
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${Math.round(bytes / (1024 * 1024))} MB` : `${Math.round(bytes / 1024)} KB`
}
