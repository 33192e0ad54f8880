import type { ToolDefinition } from './tool-types.js';

/**
 * Identity helper for typed authoring: `defineTool<{ query: string }>({ … execute: (args) => … })`
 * types `args` inside `execute`. It checks nothing at runtime — the registry validates every
 * definition when it is built, and the arguments against the schema before each call.
 */
export function defineTool<Args = Record<string, unknown>>(definition: ToolDefinition<Args>): ToolDefinition<Args> {
  return definition;
}
