import { TOOL_NAME_PATTERN } from '../core/tools/index.js';

/** Between a server's name and its tool's in the name the model sees. */
export const MCP_NAME_SEPARATOR = '__';

/**
 * The name a server's tool is offered under, `<server>__<tool>`, or null when that name breaks the
 * providers' rule (1–64 characters of `[A-Za-z0-9_-]`): such a tool is left out.
 */
export function mcpToolName(server: string, tool: string): string | null {
  const name = `${server}${MCP_NAME_SEPARATOR}${tool}`;
  return TOOL_NAME_PATTERN.test(name) ? name : null;
}
