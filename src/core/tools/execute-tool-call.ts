import { thrownText, ToolFailedError, ToolInvalidArgsError, ToolNotFoundError, type LoopfleetError } from '../errors/index.js';
import { abortReason, type Clock } from '../ports/clock.js';
import type { ImagePart, ToolCall } from '../messages.js';
import { invokeToolHandler } from './invoke-tool-handler.js';
import { parseToolArguments } from './parse-tool-arguments.js';
import { serialiseToolResult } from './serialise-tool-result.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolOutcome, ToolOutcomeErrorCode } from './tool-types.js';
import { DEFAULT_MAX_RESULT_CHARS, truncateToolResult } from './truncate-tool-result.js';

export interface ExecuteToolCallOptions {
  /** Session the call belongs to; part of the handler's idempotency key. */
  sessionId: string;
  /** Cancellation from outside (user cancel, lease loss, shutdown). */
  signal: AbortSignal;
  /** Measures durations and drives tool timeouts. */
  clock: Clock;
  /** Cap on the tool result, in characters. Default 50,000. */
  maxResultChars?: number;
}

interface CallResult {
  args: Record<string, unknown> | null;
  content: string;
  images?: readonly ImagePart[];
  error: (LoopfleetError & { code: ToolOutcomeErrorCode }) | null;
}

/**
 * Runs one tool call the model asked for and returns its outcome. Every tool-level failure is data
 * (the model sees it): an unknown tool, arguments that are not JSON or break the schema, a handler that
 * throws or times out, or a result that cannot be serialised all become a failed outcome whose
 * content (`Error: …`) the model sees as the tool result. The content is truncated to
 * `maxResultChars`.
 *
 * Only cancellation escapes: an outer signal that is already aborted, or aborts while the handler
 * runs, rejects with `CancelledError`.
 */
export async function executeToolCall(registry: ToolRegistry, call: ToolCall, options: ExecuteToolCallOptions): Promise<ToolOutcome> {
  if (options.signal.aborted) throw abortReason(options.signal);
  const startedAt = options.clock.now();
  const result = await runCall(registry, call, options);
  return {
    toolCallId: call.id,
    name: call.name,
    content: truncateToolResult(result.content, options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS),
    failed: result.error !== null,
    errorCode: result.error?.code ?? null,
    durationMs: options.clock.now() - startedAt,
    args: result.args,
    ...(result.images === undefined ? {} : { images: result.images }),
  };
}

async function runCall(registry: ToolRegistry, call: ToolCall, options: ExecuteToolCallOptions): Promise<CallResult> {
  const tool = registry.get(call.name);
  if (tool === undefined) {
    const available = registry.names().join(', ') || '(none)';
    return failure(null, new ToolNotFoundError(`unknown tool "${call.name}". Available tools: ${available}`));
  }
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return failure(null, new ToolInvalidArgsError(parsed.reason));
  const { args } = parsed;
  const check = tool.checkArguments(args);
  if (!check.ok) return failure(args, new ToolInvalidArgsError(check.message));

  // The handler gets its own copy: what it does to it cannot change the arguments the ledger records
  // (a value added that JSON cannot hold would fail the step's commit after the tool's effect).
  const ended = await invokeToolHandler(tool, structuredClone(args), Object.assign({}, options, { toolCallId: call.id }));
  if (ended.kind === 'timed_out') return failure(args, ended.error);
  if (ended.kind === 'threw') {
    const text = thrownText(ended.error) ?? 'the tool threw a value that is not an Error';
    // A handler's own argument check (a schema library's refinement) is bad arguments, not a broken
    // tool. Told by its code: a tool module may load the error class from another copy of the package.
    if (thrownCode(ended.error) === 'tool.invalid_args') return failure(args, new ToolInvalidArgsError(text, { cause: ended.error }));
    return failure(args, new ToolFailedError(text, { cause: ended.error }));
  }
  const serialised = serialiseToolResult(ended.value);
  if (!serialised.ok) {
    return failure(args, new ToolFailedError(`tool "${tool.name}" returned a result that cannot be serialised to JSON: ${serialised.reason}`));
  }
  return serialised.images === undefined ? { args, content: serialised.content, error: null } : { args, content: serialised.content, images: serialised.images, error: null };
}

function failure(args: Record<string, unknown> | null, error: LoopfleetError & { code: ToolOutcomeErrorCode }): CallResult {
  return { args, content: `Error: ${error.message}`, error };
}

/** The thrown value's `code`, if reading it does not throw (a revoked proxy, a throwing getter). */
function thrownCode(thrown: unknown): unknown {
  if (typeof thrown !== 'object' || thrown === null) return undefined;
  try {
    return (thrown as { code?: unknown }).code;
  } catch {
    return undefined;
  }
}
