import { contentText, type Message } from '../../../src/core/messages.js';
import type { Llm, LlmCallOptions, LlmRequest, LlmResponse } from '../../../src/core/ports/llm.js';
import { Gates, routingLlm } from '../producer/routing-llm.js';

/** The words a `slow:` answer streams: the first half at once, the rest after its gate opens. */
export const SLOW_WORDS = ['Once ', 'upon ', 'a ', 'time ', 'there ', 'was ', 'a ', 'fleet ', 'of ', 'workers.'];

/**
 * The e2e test's model: `slow:<name>` streams half of {@link SLOW_WORDS}, waits (abortably) until the
 * test opens gate `<name>`, then streams the rest — a reply the browser can reload in the middle of.
 * Everything else goes to the producer tests' routing model (`hold:`, `ask:`, echo).
 */
export class ViewerLlm implements Llm {
  readonly provider = 'scripted';
  readonly model = 'scripted';
  readonly #routing;

  constructor(readonly gates: Gates) {
    this.#routing = routingLlm(gates);
  }

  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const last: Message | undefined = request.messages[request.messages.length - 1];
    const text = last?.role === 'user' ? contentText(last.content) : '';
    if (!text.startsWith('slow:')) return this.#routing.complete(request, options);
    const half = SLOW_WORDS.length / 2;
    for (const word of SLOW_WORDS.slice(0, half)) options.handlers?.onTextDelta?.(word);
    await abortable(this.gates.wait(text.slice(5)), options.signal);
    for (const word of SLOW_WORDS.slice(half)) options.handlers?.onTextDelta?.(word);
    const answer = SLOW_WORDS.join('');
    const usage = { promptTokens: 20, completionTokens: SLOW_WORDS.length, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 20 + SLOW_WORDS.length };
    return { text: answer, thinking: '', toolCalls: [], finishReason: 'stop', rawFinishReason: 'stop', usage, model: this.model, provider: this.provider };
  }
}

function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, reject);
  });
}
