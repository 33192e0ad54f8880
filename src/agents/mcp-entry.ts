import { McpServerSpecSchema, type McpServerSpec } from '../mcp/index.js';

/**
 * An MCP server in an agent's `tools` (docs/mcp.md): `{ mcp: { name, command, args?, env? } }` (stdio)
 * or `{ mcp: { name, url, headers? } }` (Streamable HTTP), each with `optional?` and `timeoutMs?`.
 */
export const mcpServerEntrySchema = McpServerSpecSchema;

export type McpServerEntry = McpServerSpec;
