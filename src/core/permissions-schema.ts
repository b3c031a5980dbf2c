// The zod schema of a profile's `permissions:` (its meaning and checks are in permissions.ts, which the
// web UI imports and so stays free of zod).
import { z } from 'zod'
import { DEFAULT_PERMISSION_MODE, PERMISSION_MODES } from './permissions.js'

const toolName = z
  .string()
  .min(1)
  .refine((value) => value.trim() === value, 'expected a tool name without surrounding spaces')

export const PermissionsSchema = z.strictObject({
  mode: z.enum(PERMISSION_MODES).default(DEFAULT_PERMISSION_MODE),
  allowedTools: z.array(toolName).optional(),
  deniedTools: z.array(toolName).optional(),
})
export type PermissionsConfig = z.infer<typeof PermissionsSchema>
