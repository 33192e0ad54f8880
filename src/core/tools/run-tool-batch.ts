import { ConfigInvalidError, InternalError } from '../errors/index.js';
import { abortReason } from '../ports/clock.js';
import type { ToolCall } from '../messages.js';
import { executeToolCall, type ExecuteToolCallOptions } from './execute-tool-call.js';
import { planToolBatch } from './plan-tool-batch.js';
import type { ToolRegistry } from './tool-registry.js';
import type { ToolOutcome } from './tool-types.js';

/** Calls of one concurrent segment in flight at once when none is configured. */
export const DEFAULT_TOOL_CONCURRENCY = 4;

export interface RunToolBatchOptions extends ExecuteToolCallOptions {
  /** Most concurrency-safe calls in flight at once; a positive integer. Default 4; 1 runs everything serially. */
  concurrency?: number;
  /**
   * Called in model order before each call starts, and awaited: the call runs only after it resolves
   * (the loop records the ledger's `started` here, I5). Calls never overlap each other.
   */
  onStart?(call: ToolCall): void | Promise<void>;
  /**
   * Called when each call ends, in the order the calls finish (not model order), and awaited before
   * that call's slot is reused. Calls never overlap each other. A call that finished is reported even
   * when the batch is being cancelled, so its end is recorded rather than left in doubt.
   */
  onFinish?(outcome: ToolOutcome): void | Promise<void>;
}

/**
 * Runs one round's tool calls and returns their outcomes in the original call order, whatever order
 * they complete in. Consecutive calls to concurrency-safe tools run in parallel (at most `concurrency`
 * at once); any other call runs alone, after everything before it and before everything after it.
 *
 * A `CancelledError` (the outer signal) or an error from `onStart`/`onFinish` stops the batch: no
 * further call starts, the calls in flight see their `ctx.signal` abort and their calls are awaited —
 * which end at the abort, not when a handler that ignores its signal returns (it may still take
 * effect: the loop closes such a call as interrupted, not skipped) — and the first error is rethrown.
 */
export async function runToolBatch(registry: ToolRegistry, calls: readonly ToolCall[], options: RunToolBatchOptions): Promise<ToolOutcome[]> {
  const limit = resolveConcurrency(options.concurrency);
  if (options.signal.aborted) throw abortReason(options.signal);
  const run = new BatchRun(registry, calls, options);
  try {
    for (const segment of planToolBatch(registry, calls)) {
      await run.runSegment(segment.indices, segment.concurrent ? limit : 1);
    }
    return run.outcomes();
  } finally {
    run.dispose();
  }
}

function resolveConcurrency(value: number | undefined): number {
  if (value === undefined) return DEFAULT_TOOL_CONCURRENCY;
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigInvalidError(`tool concurrency must be a positive integer, got ${String(value)}`);
  }
  return value;
}

/** The state of one batch: its own abort controller (linked to the outer signal), results, ordering. */
class BatchRun {
  readonly #controller = new AbortController();
  readonly #results: (ToolOutcome | undefined)[];
  readonly #detachOuter: () => void;
  #failure: { error: unknown } | undefined;
  #startTail: Promise<void> = Promise.resolve();
  #finishTail: Promise<void> = Promise.resolve();

  readonly #registry: ToolRegistry;
  readonly #calls: readonly ToolCall[];
  readonly #options: RunToolBatchOptions;

  constructor(registry: ToolRegistry, calls: readonly ToolCall[], options: RunToolBatchOptions) {
    this.#registry = registry;
    this.#calls = calls;
    this.#options = options;
    this.#results = new Array<ToolOutcome | undefined>(calls.length).fill(undefined);
    const outer = options.signal;
    const onAbort = (): void => this.#fail(abortReason(outer));
    outer.addEventListener('abort', onAbort, { once: true });
    this.#detachOuter = () => outer.removeEventListener('abort', onAbort);
  }

  /** Runs the calls at `indices` with at most `limit` in flight; rethrows the batch's first error. */
  async runSegment(indices: readonly number[], limit: number): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < indices.length && !this.#controller.signal.aborted) {
        const index = indices[next++]!;
        await this.#runOne(index).catch((error: unknown) => this.#fail(error));
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, indices.length) }, worker));
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  outcomes(): ToolOutcome[] {
    return this.#results.map((outcome, index) => {
      if (outcome === undefined) throw new InternalError(`tool call #${index} has no outcome`);
      return outcome;
    });
  }

  dispose(): void {
    this.#detachOuter();
  }

  async #runOne(index: number): Promise<void> {
    const call = this.#calls[index]!;
    const { onStart, onFinish } = this.#options;
    // Start hooks run one at a time in model order. Chained without a catch: once one fails, the hooks
    // queued behind it reject with its error instead of running; once the batch stops, none runs.
    this.#startTail = this.#startTail.then(() => {
      if (this.#controller.signal.aborted) throw abortReason(this.#controller.signal);
      return onStart?.(call);
    });
    await this.#startTail;
    const { sessionId, clock, maxResultChars } = this.#options;
    const outcome = await executeToolCall(this.#registry, call, { sessionId, clock, maxResultChars, signal: this.#controller.signal });
    this.#results[index] = outcome;
    this.#finishTail = this.#finishTail.catch(() => undefined).then(() => onFinish?.(outcome));
    await this.#finishTail;
  }

  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.#controller.abort(error);
  }
}
