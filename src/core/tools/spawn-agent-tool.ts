import { ToolFailedError } from '../errors/index.js';
import { defineTool } from './define-tool.js';
import type { ToolDefinition } from './tool-types.js';

/** The name of the tool that starts a child session (docs/child-sessions.md); the loop intercepts its calls. */
export const SPAWN_AGENT = 'spawn_agent';

/** Arguments of `spawn_agent`. */
export interface SpawnAgentArgs {
  agent: string;
  task: string;
  /** Default true: the call's result is the child's answer. False: the result is the child's id at once. */
  wait?: boolean;
}

/** The longest task text a child is given (its first input). */
export const MAX_TASK_CHARS = 100_000;

/**
 * `spawn_agent`, offered to an agent with `subagents`: starts a session of one of those agents whose
 * first input is `task`. Only its schema is used: the loop runs the call itself (the parent waits
 * without holding a worker) and never calls `execute`, which throws if something does.
 */
export function spawnAgentTool(subagents: readonly string[]): ToolDefinition<SpawnAgentArgs> {
  return defineTool<SpawnAgentArgs>({
    name: SPAWN_AGENT,
    description:
      'Start a sub-agent on a task, as its own session. With wait=true (the default) the result of this call is the sub-agent\'s final answer; several calls in one turn run in parallel. With wait=false the call returns the child session id at once and the answer arrives later as a <subagent_result> message.',
    parameters: {
      type: 'object',
      properties: {
        agent: { type: 'string', enum: [...subagents], description: 'Which agent to start.' },
        task: { type: 'string', minLength: 1, maxLength: MAX_TASK_CHARS, description: 'Everything the sub-agent needs to know: it sees nothing else of this conversation.' },
        wait: { type: 'boolean', description: 'Wait for the answer (default true).' },
      },
      required: ['agent', 'task'],
      additionalProperties: false,
    },
    execute: () => {
      throw new ToolFailedError(`${SPAWN_AGENT} is handled by the agent loop and cannot be executed as a tool`);
    },
  });
}
