import { z } from 'zod';

/**
 * The shape of a structured-output request (`ResponseFormatSpec`): a name the providers accept and a
 * JSON Schema object. Shared by the agent profile's check and the per-input overrides' check, which
 * is why it stands on its own: either may import it without importing the other.
 */
export const responseFormatSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
  schema: z.record(z.string(), z.unknown()),
  strict: z.boolean().optional(),
  description: z.string().optional(),
});
