import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AnyToolDefinition, InDoubtPolicy, ToolContext, ToolDefinition } from '../core/tools/index.js';
import type { ToolResultWithImages } from '../core/tools/tool-result-images.js';

/** Runs one call of a server's tool: what {@link mcpToolDefinition} delegates `execute` to. */
export type McpToolCaller = (tool: Tool, policy: InDoubtPolicy, args: Record<string, unknown>, ctx: ToolContext) => Promise<string | ToolResultWithImages>;

/**
 * The loop's definition of one MCP tool, offered as `name`: its description and input schema as the
 * server lists them; policy `retry` only when the server declares the tool idempotent
 * (`annotations.idempotentHint`), else `fail`; run in parallel with other such calls when it declares
 * it read-only (`readOnlyHint`).
 */
export function mcpToolDefinition(name: string, tool: Tool, timeoutMs: number, call: McpToolCaller): AnyToolDefinition {
  const policy: InDoubtPolicy = tool.annotations?.idempotentHint === true ? 'retry' : 'fail';
  const definition: ToolDefinition = {
    name,
    description: tool.description ?? tool.title ?? tool.annotations?.title ?? '',
    parameters: tool.inputSchema,
    execute: (args, ctx) => call(tool, policy, args, ctx),
    policy,
    concurrencySafe: tool.annotations?.readOnlyHint === true,
    timeoutMs,
  };
  return definition as AnyToolDefinition;
}
