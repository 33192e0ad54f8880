/** Shared JSON schema pieces of the SSE and chat routes (for validation and the OpenAPI document). */

/** The gateway's error body: `{ error: { code, message, details? } }`. */
export const errorResponse = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
} as const;

export const errorResponses = { 400: errorResponse, 401: errorResponse, 403: errorResponse, 404: errorResponse } as const;

export const sessionIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 128 } },
} as const;

/** A `text/event-stream` answer, documented as such. */
export function eventStreamResponse(description: string): Record<string, unknown> {
  return { description, content: { 'text/event-stream': { schema: { type: 'string' } } } };
}
