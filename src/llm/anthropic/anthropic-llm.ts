/**
 * The `anthropic` provider: the `Llm` port over the Messages API, streaming, through the official
 * SDK (docs/llm-providers.md).
 */
import Anthropic from '@anthropic-ai/sdk';
import { urlSecrets } from '../../config/index.js';
import { ConfigInvalidError, LoopfleetError } from '../../core/errors/index.js';
import { abortReason } from '../../core/ports/clock.js';
import type { Llm, LlmCallOptions, LlmRequest, LlmResponse } from '../../core/ports/llm.js';
import { SecretScrubber } from '../../observability/redaction.js';
import { bufferErrorBody } from '../buffer-error-body.js';
import { AnthropicStreamAccumulator } from './from-anthropic-stream.js';
import { mapCallError } from './map-call-error.js';
import { END_OF_ANSWER_GRACE_MS } from '../stream-guard.js';
import { StreamIdleGuard } from './stream-idle-guard.js';
import { toAnthropicRequest } from './to-anthropic-request.js';

/** Anthropic's own endpoint, used when no base URL is configured. */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Options of {@link AnthropicLlm}. */
export interface AnthropicLlmOptions {
  /** The API key (`ANTHROPIC_API_KEY`). Never logged. */
  apiKey: string;
  /**
   * The API's base URL without `/v1` (`ANTHROPIC_BASE_URL`): a proxy, an Anthropic-compatible
   * endpoint or a test server. `null` for Anthropic's own, {@link ANTHROPIC_DEFAULT_BASE_URL}.
   */
  baseUrl: string | null;
  /** The model used when a request names none (`LLM_MODEL`). */
  model: string;
  /**
   * Milliseconds, a positive integer. Limits the wait for the response headers (the SDK's
   * `timeout`) and each silence in the streamed body (see `stream-idle-guard.ts`).
   */
  timeoutMs: number;
  /** The `fetch` the SDK uses; default the global one (`LLM_HTTP_CLIENT`, src/llm/node-http-fetch.ts). */
  fetch?: typeof fetch;
  /**
   * Secrets to take out of every error besides the API key and the base URL's password, which always
   * are (`configuredSecrets`: the other key, the Postgres and Redis passwords).
   */
  secrets?: readonly string[];
}

/**
 * Streams one Messages call per `complete`: text and thinking deltas go to the handlers as they
 * arrive, tool calls are assembled from their input fragments, and usage and the stop reason are
 * read from the closing events.
 *
 * One attempt per call: the SDK's retries are off (`maxRetries: 0`) because the loop's retry policy
 * is the only one; errors keep what that policy reads (see `map-call-error.ts`). When
 * the signal aborts, the request is cancelled, its socket closed, and the call rejects with the
 * signal's reason.
 *
 * A stream that goes silent for `timeoutMs` is aborted with a retryable `LlmTransientError`.
 *
 * The key is sent both as `Authorization: Bearer` (what SDK v1 sends) and as `x-api-key` (what
 * Anthropic-compatible endpoints and proxies behind `ANTHROPIC_BASE_URL` have read for years;
 * Anthropic uses `x-api-key` when both are present). The SDK's own logger is off: its error logs
 * include raw stream data — message content — which must only reach the redacting pino logger.
 */
export class AnthropicLlm implements Llm {
  readonly provider = 'anthropic';
  readonly model: string;
  readonly #client: Anthropic;
  readonly #timeoutMs: number;
  readonly #secrets: SecretScrubber;

  /** Throws `ConfigInvalidError` for an empty key or model, a bad timeout or base URL. */
  constructor(options: AnthropicLlmOptions) {
    checkOptions(options);
    this.model = options.model;
    this.#secrets = new SecretScrubber([options.apiKey, ...urlSecrets(options.baseUrl), ...(options.secrets ?? [])]);
    this.#timeoutMs = options.timeoutMs;
    this.#client = new Anthropic({
      apiKey: options.apiKey,
      // Explicit, so the SDK does not read ANTHROPIC_BASE_URL behind the resolved config's back.
      baseURL: options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL,
      maxRetries: 0,
      timeout: options.timeoutMs,
      logLevel: 'off',
      defaultHeaders: { 'x-api-key': options.apiKey },
      // An error answer's body is read under the SDK's timeout (see `buffer-error-body.ts`).
      fetch: bufferErrorBody(options.fetch),
    });
  }

  /**
   * Streams one reply. Handlers are called in order as deltas arrive, before this resolves.
   * Rejects with the signal's `CancelledError` when it aborts, and otherwise with an error the retry
   * policy can classify — also when text was already streamed (the loop discards it).
   */
  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const { signal, handlers } = options;
    if (signal.aborted) throw abortReason(signal);
    const params = toAnthropicRequest(request, this.model);
    const accumulator = new AnthropicStreamAccumulator({ requestedModel: params.model, handlers });
    const guard = new StreamIdleGuard(signal, this.#timeoutMs);
    try {
      const stream = await this.#client.messages.create(params, { signal: guard.signal, middleware: [guard.middleware] });
      // Read to the end rather than stopping at message_stop: leaving early makes the SDK abort the
      // request, which throws away a connection that could be reused.
      for await (const event of stream) {
        accumulator.push(event);
        // Whole: what follows `message_stop` is waited for briefly, not for a whole idle timeout.
        if (accumulator.complete) guard.endWithin(END_OF_ANSWER_GRACE_MS);
        // A handler cancelled the call (or the stream stalled): stop before the next buffered event.
        if (guard.signal.aborted) break;
      }
    } catch (error) {
      // After `message_stop` the answer is whole: a body that then breaks off costs the connection,
      // not the answer. (A malformed event after it is still a bad response.)
      if (!accumulator.complete || signal.aborted || error instanceof LoopfleetError) {
        throw guard.stalled && !signal.aborted ? guard.stalledError() : mapCallError(error, signal, this.#secrets);
      }
    } finally {
      guard.dispose();
    }
    // The SDK ends the iteration quietly when its request is aborted: by the caller, or for a stall
    // (which after `message_stop` costs nothing).
    if (signal.aborted) throw abortReason(signal);
    if (guard.stalled && !accumulator.complete) throw guard.stalledError();
    return accumulator.finish();
  }
}

function checkOptions(options: AnthropicLlmOptions): void {
  const problems: string[] = [];
  if (typeof options.apiKey !== 'string' || options.apiKey === '') problems.push('apiKey must be a non-empty string');
  if (typeof options.model !== 'string' || options.model === '') problems.push('model must be a non-empty string');
  if (!Number.isSafeInteger(options.timeoutMs) || options.timeoutMs <= 0) problems.push(`timeoutMs must be a positive integer (got ${String(options.timeoutMs)})`);
  if (options.baseUrl !== null && !(/^https?:\/\//i.test(options.baseUrl) && URL.canParse(options.baseUrl))) {
    problems.push('baseUrl must be an absolute http(s) URL or null');
  }
  if (problems.length > 0) throw new ConfigInvalidError(`invalid Anthropic adapter options: ${problems.join('; ')}`, { details: { problems } });
}
