/**
 * Tools as users declare them (DESIGN.md §6: the default export of the LOOPFLEET_TOOLS module is an
 * array of these plain objects) and as the loop runs them.
 */

/** What a handler receives besides its arguments. */
export interface ToolContext {
  sessionId: string;
  toolCallId: string;
  /** Stable across retries of the same call: `<sessionId>:<toolCallId>` (DESIGN.md I5). */
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
  /** Returns a string, or any JSON-serialisable value (serialised for the model). May throw: a throw is data. */
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
