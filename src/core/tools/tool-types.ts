/**
 * Tools as users declare them (docs/agent-loop.md; the default export of the LOOPFLEET_TOOLS module is an
 * array of these plain objects) and as the loop runs them.
 */

import type { ImagePart } from '../messages.js';
import type { ToolResultWithImages } from './tool-result-images.js';

/** What a handler receives besides its arguments. */
export interface ToolContext {
  sessionId: string;
  toolCallId: string;
  /** Stable across retries of the same call: `<sessionId>:<toolCallId>` (I5). */
  idempotencyKey: string;
  /** Aborted on cancel, lease loss, shutdown or the tool's timeout. */
  signal: AbortSignal;
}

/**
 * What happens to a call that started but never recorded an end (a crash mid-tool):
 * `retry` re-runs it with the same idempotency key (for idempotent tools, the default);
 * `fail` tells the model the outcome is unknown.
 */
export type InDoubtPolicy = 'retry' | 'fail';

/** A JSON Schema object describing the arguments. */
export type JsonSchema = Record<string, unknown>;

export interface ToolDefinition<Args = Record<string, unknown>> {
  /** 1–64 chars of `[A-Za-z0-9_-]` (the providers' rule). */
  name: string;
  description: string;
  /** JSON Schema of the arguments object; validated before `execute` is called. */
  parameters: JsonSchema;
  /**
   * Returns a string, a {@link ToolResultWithImages}, or any JSON-serialisable value (serialised for
   * the model). May throw: a throw is data.
   */
  execute(args: Args, ctx: ToolContext): unknown;
  /** Default `retry`. */
  policy?: InDoubtPolicy;
  /** May run in parallel with other concurrency-safe calls of the same round. Default false. */
  concurrencySafe?: boolean;
  /** Per-call limit in milliseconds. Default 60000. */
  timeoutMs?: number;
}

/** What the model is offered: name, description and argument schema. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/**
 * Any tool definition, whatever its argument type: what registries accept. `never` as the argument
 * type makes every `ToolDefinition<Args>` assignable without `any`; the registry validates the
 * arguments against the JSON Schema before calling `execute`.
 */
export type AnyToolDefinition = ToolDefinition<never>;

/** The result of checking arguments against a tool's JSON Schema. */
export type ArgumentsCheck = { ok: true } | { ok: false; message: string };

/**
 * A definition after validation at load: defaults resolved (no optional fields), the schema cloned and
 * frozen, and its argument validator compiled once.
 */
export interface RegisteredTool {
  readonly name: string;
  readonly spec: Readonly<ToolSpec>;
  readonly policy: InDoubtPolicy;
  readonly concurrencySafe: boolean;
  /** Per-call limit in milliseconds. */
  readonly timeoutMs: number;
  /** Calls the user's `execute` with its definition as `this`. */
  execute(args: Record<string, unknown>, ctx: ToolContext): unknown;
  /** Full JSON Schema validation of parsed arguments. */
  checkArguments(args: Record<string, unknown>): ArgumentsCheck;
}

/** Why a call failed, as a stable error code (a failed tool is data). */
export type ToolOutcomeErrorCode = 'tool.not_found' | 'tool.invalid_args' | 'tool.timeout' | 'tool.failed';

/** What one tool call produced: the tool result the model sees, plus what the ledger and metrics need. */
export interface ToolOutcome {
  toolCallId: string;
  name: string;
  /** The tool result text, already serialised and truncated. Starts with `Error: ` when `failed`. */
  content: string;
  failed: boolean;
  errorCode: ToolOutcomeErrorCode | null;
  /** Measured with the Clock port, in milliseconds. */
  durationMs: number;
  /** The parsed arguments, or null when there were none to parse (unknown tool, invalid JSON). */
  args: Record<string, unknown> | null;
  /** Images the tool returned beside `content` ({@link ToolResultWithImages}); absent when none, or when it failed. */
  images?: readonly ImagePart[];
}
