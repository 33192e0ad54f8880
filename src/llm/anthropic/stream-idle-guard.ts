/**
 * Aborts a streaming call whose response stops arriving: no bytes for `idleTimeoutMs`.
 *
 * The SDK's `timeout` only covers the wait for the response headers. Once a stream has started, a
 * server or proxy that goes silent would hold the call — and the session's lease — for good (the
 * retry policy's total deadline never cuts a running attempt). Silence is measured on the response
 * body's bytes, not on the events the SDK yields: Anthropic keeps a quiet stream alive with `ping`
 * events, which the SDK drops before yielding, so a stream that only pings (a long pause before a
 * tool's input, say) is alive and must not be cut.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import type { Middleware } from '@anthropic-ai/sdk';
import { LlmTransientError } from '../../core/errors/index.js';
import { StreamGuard } from '../stream-guard.js';

/** One call's guard: pass {@link signal} and {@link middleware} to the SDK request, then {@link dispose}. */
export class StreamIdleGuard {
  readonly #guard: StreamGuard;
  readonly #idleTimeoutMs: number;
  #disposed = false;

  constructor(caller: AbortSignal, idleTimeoutMs: number) {
    this.#guard = new StreamGuard(caller, idleTimeoutMs);
    this.#idleTimeoutMs = idleTimeoutMs;
  }

  /** The signal for the SDK request: aborted by the caller's signal or by a stall. */
  get signal(): AbortSignal {
    return this.#guard.signal;
  }

  /** True once the stream was aborted for silence (as opposed to the caller aborting). */
  get stalled(): boolean {
    return this.#guard.stalled;
  }

  /**
   * SDK middleware that starts the watch when the response headers arrive and counts every body
   * chunk as activity — of a web stream (the global `fetch`) or of the Node stream the node:http
   * client answers with (`LLM_HTTP_CLIENT=node`). Error responses pass untouched: their body was read
   * already, under the SDK's timeout (`buffer-error-body.ts`).
   */
  readonly middleware: Middleware = async (request, next) => {
    const response = await next(request);
    if (!response.ok || response.body === null || this.#disposed) return response;
    this.#guard.watchIdle();
    const body: unknown = response.body;
    if (body instanceof Readable) {
      // The node:http client (LLM_HTTP_CLIENT=node) answers with the Node stream itself.
      const touched = new Transform({
        transform: (chunk: Buffer, _encoding, done) => {
          this.#guard.touch();
          done(null, chunk);
        },
      });
      // pipeline: an error or an early end on either side ends both (and frees the socket).
      pipeline(body, touched, () => undefined);
      return Object.assign({}, response, { body: touched }) as unknown as Response;
    }
    const touch = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        this.#guard.touch();
        controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(touch), response);
  };

  /** The answer is whole (`message_stop`): read the rest of the body for a short grace only (`StreamGuard.endWithin`). */
  endWithin(graceMs: number): void {
    this.#guard.endWithin(graceMs);
  }

  /** The error for a stalled stream: retryable, since a new attempt usually gets a live server. */
  stalledError(): LlmTransientError {
    return new LlmTransientError(`Anthropic stream stalled: no data for ${this.#idleTimeoutMs} ms`, {
      details: { provider: 'anthropic', reason: 'stalled', idleTimeoutMs: this.#idleTimeoutMs },
    });
  }

  /** Stops watching. The SDK closes the response itself when its iteration ends early. */
  dispose(): void {
    this.#disposed = true;
    this.#guard.dispose(true);
  }
}
