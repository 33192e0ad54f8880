import { ToolTimeoutError } from '../errors/index.js';
import { abortReason, startGuardTimer, type Clock } from '../ports/clock.js';
import type { RegisteredTool, ToolContext } from './tool-types.js';

/** How a handler ended: it returned, it threw (sync or async), or its time ran out. */
export type HandlerResult =
  | { kind: 'returned'; value: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'timed_out'; error: ToolTimeoutError };

export interface InvokeToolHandlerOptions {
  sessionId: string;
  toolCallId: string;
  /** The caller's cancellation (user cancel, lease loss, shutdown). */
  signal: AbortSignal;
  clock: Clock;
}

/**
 * Runs a tool's handler with its timeout. The handler's `ctx.signal` aborts when the outer signal
 * aborts (reason: the outer reason) or when the timeout fires (reason: a `ToolTimeoutError`); either
 * way this returns at once instead of waiting for a handler that ignores its signal. The timeout is a
 * guard timer of the clock (`startGuardTimer`) racing the handler, so a manual clock drives it in
 * tests; it is stopped when the handler ends first. A synchronous handler that never yields cannot be interrupted.
 *
 * Rejects with `CancelledError` when the outer signal is or becomes aborted before the handler ends:
 * cancellation is not data, the loop handles it.
 */
export async function invokeToolHandler(tool: RegisteredTool, args: Record<string, unknown>, options: InvokeToolHandlerOptions): Promise<HandlerResult> {
  const { signal: outer, clock, sessionId, toolCallId } = options;
  if (outer.aborted) throw abortReason(outer);
  const controller = new AbortController();
  let detachOuter = (): void => undefined;
  // Rejects in the same tick the outer signal aborts, so it wins the race against a handler that fails
  // because its own signal was aborted: such a failure is a cancellation, not a tool failure.
  const cancelled = new Promise<never>((_, reject) => {
    const onAbort = (): void => {
      controller.abort(outer.reason);
      reject(abortReason(outer));
    };
    outer.addEventListener('abort', onAbort, { once: true });
    detachOuter = () => outer.removeEventListener('abort', onAbort);
  });
  const ctx: ToolContext = { sessionId, toolCallId, idempotencyKey: `${sessionId}:${toolCallId}`, signal: controller.signal };
  // The executor turns a synchronous throw into a rejection, like an async handler's.
  const handled = new Promise<unknown>((resolve) => resolve(tool.execute(args, ctx))).then(
    (value): HandlerResult => ({ kind: 'returned', value }),
    (error: unknown): HandlerResult => ({ kind: 'threw', error }),
  );
  let stopTimer = (): void => undefined;
  // Stopped once the race is decided; until it fires it never settles.
  const timedOut = new Promise<HandlerResult>((resolve) => {
    stopTimer = startGuardTimer(clock, tool.timeoutMs, () =>
      resolve({ kind: 'timed_out', error: new ToolTimeoutError(`tool "${tool.name}" timed out after ${tool.timeoutMs} ms`) }),
    );
  });
  try {
    const result = await Promise.race([handled, timedOut, cancelled]);
    if (result.kind === 'timed_out') controller.abort(result.error);
    return result;
  } finally {
    detachOuter();
    stopTimer();
  }
}
