/**
 * The `Llm` port over OpenAI Chat Completions, streaming, through the official SDK (docs/llm-providers.md).
 * Works with any OpenAI-compatible endpoint given its base URL.
 *
 * One attempt per call: the SDK's retries are off (`maxRetries: 0`) because the loop's retry policy is
 * the only one; errors leave here classified for it (see `to-llm-error.ts`).
 */
import OpenAI, { APIError } from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { urlSecrets } from '../../config/index.js';
import { ConfigInvalidError } from '../../core/errors/index.js';
import { abortReason } from '../../core/ports/clock.js';
import type { Llm, LlmCallOptions, LlmRequest, LlmResponse, LlmStreamHandlers } from '../../core/ports/llm.js';
import { SecretScrubber } from '../../observability/redaction.js';
import { mapFinishReason } from './map-finish-reason.js';
import { StreamAccumulator, type AccumulatedResponse } from './stream-accumulator.js';
import { bufferErrorBody } from '../buffer-error-body.js';
import { sseEvents, type SseEvent } from '../sse-events.js';
import { END_OF_ANSWER_GRACE_MS, StreamGuard } from '../stream-guard.js';
import { toLlmError } from './to-llm-error.js';
import { toOpenAiRequest, type MaxTokensParam } from './to-openai-request.js';

/** OpenAI's own endpoint, used when no base URL is configured. */
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Options of {@link OpenAiLlm}. */
export interface OpenAiLlmOptions {
  /** Sent as `Authorization: Bearer <apiKey>`. Required, non-empty. */
  apiKey: string;
  /**
   * The API root including its version path (`https://api.openai.com/v1`, `http://localhost:8000/v1`);
   * requests go to `<baseUrl>/chat/completions`. `null` for OpenAI's own endpoint.
   */
  baseUrl: string | null;
  /** The model used when a request names none (`LlmRequest.model` is null). */
  model: string;
  /**
   * Milliseconds. Limits the wait for the response to begin (the SDK's timeout) and each pause between
   * two streamed chunks (a stalled stream). A positive integer.
   */
  timeoutMs: number;
  /** The `fetch` the SDK uses; default the global one. For proxies and instrumentation. */
  fetch?: typeof fetch;
  /**
   * Which field carries `LlmRequest.maxTokens`. Default: by the model each request is sent to —
   * `max_completion_tokens` for OpenAI's reasoning models (`o1`, `o3`, `o4-mini`, `gpt-5*`), which
   * refuse `max_tokens`, and `max_tokens` for every other name (see {@link MaxTokensParam}).
   */
  maxTokensParam?: MaxTokensParam;
  /** Send the session id as `prompt_cache_key`. Default true. */
  promptCacheKey?: boolean;
  /**
   * Secrets to take out of every error besides the API key and the base URL's password, which always
   * are (`configuredSecrets`: the other key, the Postgres and Redis passwords).
   */
  secrets?: readonly string[];
}

/** An `Llm` backed by the OpenAI Chat Completions API. */
export class OpenAiLlm implements Llm {
  readonly provider = 'openai';
  readonly model: string;
  readonly #client: OpenAI;
  readonly #timeoutMs: number;
  readonly #maxTokensParam: MaxTokensParam | undefined;
  readonly #promptCacheKey: boolean;
  readonly #secrets: SecretScrubber;

  constructor(options: OpenAiLlmOptions) {
    checkOptions(options);
    this.model = options.model;
    this.#secrets = new SecretScrubber([options.apiKey, ...urlSecrets(options.baseUrl), ...(options.secrets ?? [])]);
    this.#timeoutMs = options.timeoutMs;
    this.#maxTokensParam = options.maxTokensParam;
    this.#promptCacheKey = options.promptCacheKey ?? true;
    this.#client = new OpenAI({
      apiKey: options.apiKey,
      // Everything explicit: the SDK would otherwise read OPENAI_BASE_URL, OPENAI_ORG_ID,
      // OPENAI_PROJECT and OPENAI_LOG from the environment behind the resolved config's back.
      baseURL: options.baseUrl ?? OPENAI_DEFAULT_BASE_URL,
      organization: null,
      project: null,
      maxRetries: 0,
      timeout: options.timeoutMs,
      // Failures are thrown, not logged: the SDK logs to the console, past pino and its redaction of
      // message contents (it prints an unparseable chunk verbatim).
      logLevel: 'off',
      // An error answer's body is read under the SDK's timeout (see `buffer-error-body.ts`).
      fetch: bufferErrorBody(options.fetch),
    });
  }

  /**
   * Streams one completion. Handlers are called in order as deltas arrive, before this resolves.
   * Rejects with the caller's `CancelledError` when `signal` aborts, and otherwise with an error the
   * retry policy can classify — also when text was already streamed (the loop discards it).
   */
  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const { signal } = options;
    if (signal.aborted) throw abortReason(signal);
    const params = toOpenAiRequest(request, { defaultModel: this.model, maxTokensParam: this.#maxTokensParam, promptCacheKey: this.#promptCacheKey });
    const guard = new StreamGuard(signal, this.#timeoutMs);
    let completed = false;
    try {
      const result = await this.#stream(params, guard, signal, options.handlers);
      completed = true;
      return {
        text: result.text,
        thinking: result.thinking,
        toolCalls: result.toolCalls,
        finishReason: mapFinishReason(result.rawFinishReason),
        rawFinishReason: result.rawFinishReason,
        usage: result.usage,
        model: result.model ?? params.model,
        provider: this.provider,
      };
    } finally {
      guard.dispose(completed);
    }
  }

  async #stream(
    params: ChatCompletionCreateParamsStreaming,
    guard: StreamGuard,
    signal: AbortSignal,
    handlers: LlmStreamHandlers | undefined,
  ): Promise<AccumulatedResponse> {
    const failed = (error: unknown) => toLlmError(error, { signal, stalled: guard.stalled, idleTimeoutMs: this.#timeoutMs, secrets: this.#secrets });
    let response: Response;
    try {
      // The SDK sends the request and turns an error status into its `APIError`; the body's events
      // are read here (`sse-events.ts`), with the SDK stream's rules (`chunkOf`), at a fraction of
      // its cost per chunk (bench/history/log-to-session-30.md, item 29).
      response = await this.#client.chat.completions.create(params, { signal: guard.signal }).asResponse();
    } catch (error) {
      throw failed(error);
    }
    guard.watchIdle();
    const accumulator = new StreamAccumulator(handlers);
    let events: AsyncGenerator<SseEvent, void, undefined>;
    try {
      // Every chunk counts as activity, comments (keep-alives) included: see `SseEventsOptions.onChunk`.
      events = sseEvents(bodyOf(response), { onChunk: () => guard.touch() });
    } catch (error) {
      throw failed(error);
    }
    let ended = false;
    let sawDone = false;
    try {
      for (;;) {
        let next: IteratorResult<SseEvent>;
        try {
          next = await events.next();
        } catch (error) {
          // After `[DONE]` the answer is whole: a body that then breaks off or stalls costs the
          // connection, not the answer.
          if (sawDone && !signal.aborted) break;
          throw failed(error);
        }
        if (next.done === true) break;
        // After `[DONE]` the rest of the body is read to its end, unparsed, so the connection is reused.
        if (sawDone) continue;
        let chunk: unknown;
        try {
          chunk = chunkOf(next.value, response.headers);
        } catch (error) {
          throw failed(error);
        }
        if (chunk === DONE) {
          sawDone = true;
          // Whole: the rest of the body is waited for briefly, not for a whole idle timeout.
          guard.endWithin(END_OF_ANSWER_GRACE_MS);
          continue;
        }
        accumulator.push(chunk);
        // A handler may have aborted the call (cancel on the first delta): stop reading at once.
        if (signal.aborted) throw abortReason(signal);
      }
      ended = true;
    } finally {
      // Leaving early (an error, a throwing handler): closing the events closes the response body.
      if (!ended) void events.return(undefined).catch(() => undefined);
    }
    if (signal.aborted || (guard.stalled && !sawDone)) throw failed(new Error('the stream was aborted'));
    return accumulator.finish();
  }
}

/** Marks the `data: [DONE]` event that ends an OpenAI stream. */
const DONE = Symbol('done');

/**
 * One event's chunk, by the SDK stream's rules (`openai/core/streaming`): `[DONE]` ends the stream;
 * otherwise the data is JSON (a `SyntaxError` when not), and a payload with a truthy `error` member is
 * the provider failing mid-stream, thrown as the SDK's `APIError` without a status (as the SDK does).
 */
function chunkOf(sse: SseEvent, headers: Headers): unknown {
  if (sse.data.startsWith('[DONE]')) return DONE;
  const data = JSON.parse(sse.data) as unknown;
  const error = typeof data === 'object' && data !== null ? (data as { error?: unknown }).error : undefined;
  if (error) throw new APIError(undefined, error as Record<string, unknown>, undefined, headers);
  return data;
}

/** The response body as bytes: the SDK's `fetch` answers with a web stream or (ours) a Node stream. */
function bodyOf(response: Response): AsyncIterable<Uint8Array> {
  const body = response.body as unknown;
  if (body === null || body === undefined) throw new Error('the OpenAI response has no body to stream');
  return body as AsyncIterable<Uint8Array>;
}

function checkOptions(options: OpenAiLlmOptions): void {
  const problems: string[] = [];
  if (typeof options.apiKey !== 'string' || options.apiKey === '') problems.push('apiKey must be a non-empty string');
  if (typeof options.model !== 'string' || options.model === '') problems.push('model must be a non-empty string');
  if (!Number.isSafeInteger(options.timeoutMs) || options.timeoutMs <= 0) problems.push(`timeoutMs must be a positive integer (got ${String(options.timeoutMs)})`);
  if (options.baseUrl !== null && !URL.canParse(options.baseUrl)) problems.push('baseUrl must be an absolute URL or null');
  if (problems.length > 0) throw new ConfigInvalidError(`invalid OpenAI adapter options: ${problems.join('; ')}`, { details: { problems } });
}
