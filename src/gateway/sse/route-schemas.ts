/** Schema pieces the SSE and chat routes add to the gateway's own (src/gateway/openapi.ts). */

/** A `text/event-stream` answer, documented as such. */
export function eventStreamResponse(description: string): Record<string, unknown> {
  return { description, content: { 'text/event-stream': { schema: { type: 'string' } } } };
}
