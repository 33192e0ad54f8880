/**
 * loopfleet's public API: what applications import (`import { SessionQueue } from 'loopfleet'`).
 *
 * - {@link SessionQueue}: hand inputs to sessions, follow their events, read outcomes and history.
 * - Typed errors with stable codes (`ERROR_CODES`), for `catch` blocks that switch on `code`.
 * - Agent definitions (`defineAgent`) for the module named by `LOOPFLEET_AGENTS`.
 * - Tool definitions (`defineTool`) for the module named by `LOOPFLEET_TOOLS`, and hooks
 *   (`defineHook`) for the one named by `LOOPFLEET_HOOKS`.
 * - The event stream's types and key, and the job names, for code that talks to Redis or BullMQ
 *   directly (touch points 1 and 2 in docs/client.md).
 *
 * A producer that needs only the queue imports `loopfleet/client` (src/client.ts), which loads no
 * LLM SDK, worker or gateway code.
 */

export * from './client.js';

export { defineAgent, type AgentDefinition } from './agents/agent-definition.js';
export { defineTool } from './core/tools/define-tool.js';
export { ToolResultWithImages } from './core/tools/tool-result-images.js';
export { defineHook, type HookContext, type HookContexts, type HookDefinition, type HookDirective, type HookPoint } from './core/hooks/hook-points.js';
export type { AnyToolDefinition, InDoubtPolicy, JsonSchema, ToolContext, ToolDefinition } from './core/tools/tool-types.js';
