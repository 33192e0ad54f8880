import { z } from 'zod';

/**
 * An MCP server in an agent's `tools` (docs/mcp.md): `{ mcp: { name, command, … } }` or
 * `{ mcp: { name, url, … } }`. Checked in full when the worker starts the server.
 */
export const mcpServerEntrySchema = z.object({ mcp: z.record(z.string(), z.unknown()) }).strict();

export type McpServerEntry = z.infer<typeof mcpServerEntrySchema>;
