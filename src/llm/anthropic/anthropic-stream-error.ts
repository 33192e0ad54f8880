/**
 * An `error` event inside a 200 stream (`event: error`, `{"type":"error","error":{"type":
 * "overloaded_error","message":"Overloaded"}}`). Anthropic sends one when a failure happens after
 * the response has started, so the HTTP status says nothing (the SDK throws an `APIError` whose
 * `status` is undefined). The error's `type` is what tells a transient failure from a final one;
 * this maps it to the status Anthropic uses for that type on an HTTP error, so the retry policy
 * classifies an in-stream `overloaded_error` exactly like a 529.
 */
import { APIError } from '@anthropic-ai/sdk';
import { LlmNonRetryableError, LlmTransientError, type LoopfleetErrorOptions } from '../../core/errors/index.js';

/** Anthropic's error types and the HTTP status each one is sent with. */
export const ANTHROPIC_ERROR_STATUS: ReadonlyMap<string, number> = new Map([
  ['invalid_request_error', 400],
  ['authentication_error', 401],
  ['billing_error', 402],
  ['permission_error', 403],
  ['not_found_error', 404],
  ['request_too_large', 413],
  ['rate_limit_error', 429],
  ['api_error', 500],
  ['timeout_error', 504],
  ['overloaded_error', 529],
]);

/** What an in-stream error exposes besides the loopfleet fields: read by the retry policy and logs. */
export interface StreamErrorFields {
  /** Anthropic's error type, e.g. `overloaded_error`; `unknown` when the event had none. */
  readonly errorType: string;
  /** The HTTP status Anthropic uses for this type, or null for a type it does not document. */
  readonly status: number | null;
  /** The headers of the (200) streaming response. */
  readonly headers: Headers | undefined;
}

/** A retryable in-stream error (overloaded, rate limited, api or timeout error, unknown type). */
export class AnthropicStreamTransientError extends LlmTransientError implements StreamErrorFields {
  readonly errorType: string;
  readonly status: number | null;
  readonly headers: Headers | undefined;

  constructor(message: string, fields: StreamErrorFields, options: LoopfleetErrorOptions) {
    super(message, options);
    this.errorType = fields.errorType;
    this.status = fields.status;
    this.headers = fields.headers;
  }
}

/** An in-stream error that a retry would meet again (invalid request, authentication …). */
export class AnthropicStreamRejectedError extends LlmNonRetryableError implements StreamErrorFields {
  readonly errorType: string;
  readonly status: number | null;
  readonly headers: Headers | undefined;

  constructor(message: string, fields: StreamErrorFields, options: LoopfleetErrorOptions) {
    super(message, options);
    this.errorType = fields.errorType;
    this.status = fields.status;
    this.headers = fields.headers;
  }
}

/**
 * True for the SDK error an in-stream `error` event becomes: an `APIError` without an HTTP status
 * that is not a connection failure or an abort (those have no status either).
 */
export function isStreamErrorEvent(error: unknown): error is APIError {
  if (!(error instanceof APIError) || error.status !== undefined) return false;
  return error.name !== 'APIConnectionError' && error.name !== 'APIConnectionTimeoutError' && error.name !== 'APIUserAbortError';
}

/**
 * The typed error for an in-stream error event, its SDK error as `cause`. Retryable when its type
 * maps to 408, 409, 429 or a 5xx — or to nothing known (an error we cannot read must not strand a
 * session; the policy's attempt limit still bounds it) — the same rule as `classifyLlmError`.
 */
export function fromStreamErrorEvent(error: APIError): AnthropicStreamTransientError | AnthropicStreamRejectedError {
  const errorType = error.type ?? bodyErrorType(error.error) ?? 'unknown';
  const status = ANTHROPIC_ERROR_STATUS.get(errorType) ?? null;
  const fields: StreamErrorFields = { errorType, status, headers: error.headers };
  const message = `Anthropic stream error ${errorType}: ${error.apiMessage ?? error.message}`;
  const options: LoopfleetErrorOptions = {
    cause: error,
    details: { provider: 'anthropic', errorType, status, requestId: error.requestID ?? null },
  };
  const retryable = status === null || status === 408 || status === 409 || status === 429 || status >= 500;
  return retryable ? new AnthropicStreamTransientError(message, fields, options) : new AnthropicStreamRejectedError(message, fields, options);
}

function bodyErrorType(body: unknown): string | null {
  const inner = (body as { error?: { type?: unknown } } | undefined)?.error;
  return typeof inner?.type === 'string' ? inner.type : null;
}
