/**
 * What a failed Anthropic call throws, converted once, at the adapter's catch.
 *
 * The retry policy (`classifyLlmError`, `retryAfterMs`) reads HTTP `status`, `headers` and the
 * SDK's error names itself, so SDK errors that carry those pass through untouched: an HTTP error
 * (`APIError` with `status` and `headers`, 529 included), a connection failure or timeout
 * (`APIConnectionError`, `APIConnectionTimeoutError`), and a socket dropped mid-stream (undici's
 * `TypeError: terminated` with an `UND_ERR_SOCKET` cause). Only what the policy could not read is
 * converted. Whatever is returned has every secret the adapter knows taken out: a provider that
 * refuses a key may quote it in its error body, and the message reaches the input's stored error,
 * its events and the logs.
 */
import { LlmBadResponseError, LoopfleetError } from '../../core/errors/index.js';
import { abortReason } from '../../core/ports/clock.js';
import type { SecretScrubber } from '../../observability/redaction.js';
import { fromStreamErrorEvent, isStreamErrorEvent } from './anthropic-stream-error.js';

/**
 * The error to throw for `error`, raised while `signal` governed the call:
 * 1. the signal aborted → its reason as a `CancelledError`, whatever the SDK made of the abort;
 * 2. a loopfleet error (a malformed stream found by the accumulator) → as is;
 * 3. an in-stream `error` event → typed by its error type (see `anthropic-stream-error.ts`);
 * 4. an event whose data is not JSON (the SDK's `SyntaxError`) → `LlmBadResponseError`, retryable;
 * 5. anything else → as is.
 */
export function mapCallError(error: unknown, signal: AbortSignal, secrets: SecretScrubber): unknown {
  return secrets.error(mapped(error, signal));
}

function mapped(error: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return abortReason(signal);
  if (error instanceof LoopfleetError) return error;
  if (isStreamErrorEvent(error)) return fromStreamErrorEvent(error);
  if (error instanceof SyntaxError) {
    return new LlmBadResponseError('malformed Anthropic stream: an event is not valid JSON', {
      cause: error,
      details: { provider: 'anthropic' },
    });
  }
  return error;
}
