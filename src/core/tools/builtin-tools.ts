import { ToolFailedError } from '../errors/index.js';
import type { Clock } from '../ports/clock.js';
import { defineTool } from './define-tool.js';
import type { ToolDefinition } from './tool-types.js';

/** The name of the human-input tool the loop intercepts: the session waits for the answer. */
export const REQUEST_USER_INPUT = 'request_user_input';

/** What `current_time` returns. */
export interface CurrentTime {
  iso: string;
  epochMs: number;
  timezone: 'UTC';
}

/** Arguments of `request_user_input`. */
export interface RequestUserInputArgs {
  prompt: string;
  kind?: 'text' | 'choice' | 'confirm';
  options?: string[];
  metadata?: Record<string, unknown>;
}

/** `current_time`: the time according to the given clock (the manual clock in tests). No arguments. */
export function currentTimeTool(clock: Clock): ToolDefinition<Record<string, never>> {
  return defineTool<Record<string, never>>({
    name: 'current_time',
    description: 'Returns the current date and time in UTC, as an ISO 8601 string and as milliseconds since the epoch.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    concurrencySafe: true,
    execute: (): CurrentTime => {
      const epochMs = clock.now();
      return { iso: new Date(epochMs).toISOString(), epochMs, timezone: 'UTC' };
    },
  });
}

/**
 * `request_user_input`: the model asks a human and the input ends `waiting_for_input`. Only its schema
 * is used: the loop intercepts the call before any tool runs and never calls `execute`, which throws
 * if something does.
 */
export const requestUserInputTool: Readonly<ToolDefinition<RequestUserInputArgs>> = Object.freeze(defineTool<RequestUserInputArgs>({
  name: REQUEST_USER_INPUT,
  description:
    'Ask the user a question and wait for the answer. Use it when you cannot proceed without information or a decision only the user has.',
  parameters: {
    type: 'object',
    properties: {
      prompt: { type: 'string', minLength: 1, description: 'The question or request shown to the user.' },
      kind: { type: 'string', enum: ['text', 'choice', 'confirm'], description: 'The kind of answer expected. Default text.' },
      options: { type: 'array', items: { type: 'string' }, description: 'The choices offered when kind is choice.' },
      metadata: { type: 'object', description: 'Extra data passed through to the application.' },
    },
    required: ['prompt'],
    additionalProperties: false,
  },
  execute: () => {
    throw new ToolFailedError(`${REQUEST_USER_INPUT} is handled by the agent loop and cannot be executed as a tool`);
  },
}));
