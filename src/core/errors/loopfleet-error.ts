/**
 * The base of every error loopfleet raises on purpose.
 *
 * `code` is a stable, dotted string (`lease.lost`, `input.too_large` …) that callers, job results,
 * events and metrics may switch on; it never changes once released. `retryable` says whether doing
 * the same thing again may succeed (a system fault) or cannot (bad input, bad config, bad model output).
 * `fault` splits errors by whose fault they are: the input, the configuration, the model or the system.
 */
export type ErrorFault = 'input' | 'config' | 'model' | 'system';

export interface LoopfleetErrorOptions {
  cause?: unknown;
  /** Structured, non-secret detail for logs and typed consumers. */
  details?: Record<string, unknown>;
}

export abstract class LoopfleetError extends Error {
  abstract readonly code: string;
  abstract readonly retryable: boolean;
  abstract readonly fault: ErrorFault;
  readonly details: Record<string, unknown>;

  constructor(message: string, options: LoopfleetErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.details = options.details ?? {};
  }

  /** A JSON-safe view: what job results, events and logs carry. Never includes the stack. */
  toJSON(): { code: string; message: string; retryable: boolean; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, retryable: this.retryable, details: this.details };
  }
}

export function isLoopfleetError(value: unknown): value is LoopfleetError {
  return value instanceof LoopfleetError;
}
