/**
 * What a failed OpenAI call throws, decided once, at the adapter's catch. The loop's retry
 * policy (`classifyLlmError`, `retryAfterMs`) reads the result:
 * - the caller aborted → the caller's `CancelledError` (`abortReason`), never the SDK's abort error;
 * - an HTTP error status → the SDK's `APIError` itself, so `status` and `headers` (`retry-after`,
 *   `retry-after-ms`, `x-request-id`) stay where the policy looks for them;
 * - a chunk that is not JSON → `LlmBadResponseError` (retryable);
 * - no connection, a timeout, a stalled or broken stream, an error event inside the stream →
 *   `LlmTransientError` (retryable) — except an error event that says the request is wrong
 *   (`LlmNonRetryableError`, see `inStreamError`). The SDK's connection errors are all named `Error`, so wrapping
 *   them is what makes them classify as retryable by type rather than by the "unknown" fallback.
 * The original error is always the `cause`. Whatever is returned has every secret the adapter knows
 * taken out (`FailedCall.secrets`): a provider that refuses a key may quote it in its error body,
 * and the message reaches the input's stored error, its events and the logs.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { LlmBadResponseError, LlmNonRetryableError, LlmTransientError, LoopfleetError } from '../../core/errors/index.js';
import { httpStatusOf, isRetryableStatus } from '../../core/retry/index.js';
import { abortReason } from '../../core/ports/clock.js';
import type { SecretScrubber } from '../../observability/redaction.js';

/** What {@link toLlmError} needs to know about the call that failed. */
export interface FailedCall {
  /** The caller's signal. */
  signal: AbortSignal;
  /** Whether the stream guard aborted the request because no chunk came for `idleTimeoutMs`. */
  stalled: boolean;
  idleTimeoutMs: number;
  /** The API key and the other configured secrets, taken out of the error's text. */
  secrets: SecretScrubber;
}

/** Converts what the SDK or the stream threw. */
export function toLlmError(error: unknown, call: FailedCall): unknown {
  return call.secrets.error(converted(error, call));
}

function converted(error: unknown, call: FailedCall): unknown {
  if (call.signal.aborted) return abortReason(call.signal);
  if (error instanceof LoopfleetError) return error;
  if (call.stalled) return transient(`no data from the OpenAI stream for ${call.idleTimeoutMs} ms`, 'stalled', error);
  if (error instanceof APIConnectionTimeoutError) return transient('the OpenAI request timed out before the response began', 'timeout', error);
  if (error instanceof APIConnectionError) return transient(`could not reach the OpenAI endpoint: ${error.message}`, 'connection', error);
  if (error instanceof APIError) {
    if (typeof error.status === 'number') return error;
    return inStreamError(error);
  }
  if (error instanceof SyntaxError) {
    return new LlmBadResponseError('the OpenAI stream sent a chunk that is not JSON', { cause: error, details: { provider: 'openai' } });
  }
  // The body broke off mid-stream (undici's `TypeError: terminated`, a reset socket).
  return transient(`the OpenAI stream broke off: ${error instanceof Error ? error.message : String(error)}`, 'connection', error);
}

/**
 * `{"error": …}` inside a 200 stream: the provider failed after it started answering. Retryable,
 * unless it says the request itself is wrong: OpenAI's `type: "invalid_request_error"`, or an HTTP
 * status as the `code` that compatible servers put there (OpenRouter, vLLM: `"code": 400`) and that
 * is not worth retrying (`isRetryableStatus`) — a context too long for the model fails the same way
 * every time.
 */
function inStreamError(error: APIError): LlmTransientError | LlmNonRetryableError {
  const message = `the OpenAI stream reported an error: ${error.message}`;
  const details = { type: error.type ?? null, errorCode: error.code ?? null };
  // Read as the retry policy reads a status (a number, or three digits as text).
  const coded = httpStatusOf({ status: error.code });
  const status = coded !== null && coded >= 400 ? coded : null;
  const refused = status !== null ? !isRetryableStatus(status) : error.type === 'invalid_request_error';
  if (!refused) return transient(message, 'stream_error', error, details);
  // With the status the request would have been refused with, so the retry policy and the fallback
  // see a rejection of this request (`httpStatusOf`), not a provider that is down.
  const rejection = new LlmNonRetryableError(message, { cause: error, details: { provider: 'openai', reason: 'stream_error', ...details } });
  return Object.assign(rejection, { status: status ?? 400 });
}

function transient(message: string, reason: string, cause: unknown, extra: Record<string, unknown> = {}): LlmTransientError {
  return new LlmTransientError(message, { cause, details: { provider: 'openai', reason, ...extra } });
}
