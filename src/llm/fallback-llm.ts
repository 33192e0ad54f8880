import { CancelledError } from '../core/errors/index.js';
import { systemClock, type Clock } from '../core/ports/clock.js';
import type { Llm, LlmCallOptions, LlmFallbackInfo, LlmRequest, LlmResponse } from '../core/ports/llm.js';
import { classifyLlmError, type LlmErrorClassification } from '../core/retry/index.js';
import { SecretScrubber } from '../observability/redaction.js';

export interface FallbackOptions {
  /** Consecutive retryable failures (429, 5xx, connection) after which a provider is skipped. Default 2. */
  switchAfterFailures?: number;
  /** How long a benched provider is skipped before it is tried first again, in ms. Default 60000. */
  cooldownMs?: number;
  clock?: Clock;
  /**
   * Secrets (`configuredSecrets`) taken out of what a failure passes on: the `errorMessage` of each
   * switch, which becomes an event, and the error thrown when no provider serves. The adapters take
   * out theirs already; this covers any `Llm` in the list. Default: none.
   */
  secrets?: readonly string[];
}

interface TargetState {
  llm: Llm;
  label: string;
  failures: number;
  /** Skipped until this time (epoch ms); 0 = healthy. */
  downUntil: number;
}

/**
 * An ordered list of provider/model pairs that serves each call from the first healthy one
 * (docs/llm-providers.md). A non-retryable failure moves the call to the next provider at once: one that
 * concerns the provider (an expired key's 401, a 402, a 403, a 404 model) also benches it, while a
 * rejection of this request alone (400, 413, 422 …) does not. Retryable failures (a 429 storm, 5xx)
 * are left to the loop's retry policy until `switchAfterFailures` in a row, then the next provider
 * serves. A benched provider is skipped for `cooldownMs`, then tried first again. Every switch is
 * reported through `handlers.onFallback`, so the loop can emit an event and drop partial text.
 */
export class FallbackLlm implements Llm {
  readonly #targets: TargetState[];
  readonly #switchAfter: number;
  readonly #cooldownMs: number;
  readonly #clock: Clock;
  readonly #secrets: SecretScrubber;

  constructor(targets: readonly Llm[], options: FallbackOptions = {}) {
    if (targets.length === 0) throw new TypeError('FallbackLlm needs at least one provider');
    this.#targets = targets.map((llm) => ({ llm, label: `${llm.provider}:${llm.model}`, failures: 0, downUntil: 0 }));
    this.#switchAfter = Math.max(1, options.switchAfterFailures ?? 2);
    this.#cooldownMs = Math.max(0, options.cooldownMs ?? 60_000);
    this.#clock = options.clock ?? systemClock;
    this.#secrets = new SecretScrubber(options.secrets ?? []);
  }

  get provider(): string {
    return this.#current().llm.provider;
  }

  get model(): string {
    return this.#current().llm.model;
  }

  /** The `provider:model` labels, in preference order. */
  get labels(): string[] {
    return this.#targets.map((target) => target.label);
  }

  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const order = this.#order();
    let lastError: unknown;
    for (let index = 0; index < order.length; index += 1) {
      const target = order[index]!;
      try {
        // Each pair names its own model: an override (an input's `model`) is meant for the primary's
        // provider, and would be wrong for the others.
        const model = target === this.#targets[0] ? (request.model ?? target.llm.model) : target.llm.model;
        const response = await target.llm.complete(Object.assign({}, request, { model }), options);
        target.failures = 0;
        target.downUntil = 0;
        return response;
      } catch (caught) {
        if (caught instanceof CancelledError || options.signal.aborted) throw caught;
        const error = this.#secrets.error(caught);
        lastError = error;
        const reason = this.#recordFailure(target, error);
        const next = order[index + 1];
        if (reason === null || next === undefined) throw error;
        const info: LlmFallbackInfo = { from: target.label, to: next.label, reason, errorMessage: errorMessage(error) };
        options.handlers?.onFallback?.(info);
      }
    }
    throw lastError;
  }

  /**
   * Null when the loop's retry policy should retry this provider; otherwise why the call moves on. A
   * request-specific rejection (a 400 `context_length_exceeded`, a 413, a 422) says nothing about the
   * provider: the call moves on, but the provider is not benched — that would send every other
   * session to the fallback for `cooldownMs` because of one oversized request.
   */
  #recordFailure(target: TargetState, error: unknown): LlmFallbackInfo['reason'] | null {
    const classification = classifyLlmError(error);
    if (isRequestRejection(classification)) return 'non_retryable';
    target.failures += 1;
    if (classification.retryable && target.failures < this.#switchAfter) return null;
    target.downUntil = this.#clock.now() + this.#cooldownMs;
    target.failures = 0;
    return classification.retryable ? 'unavailable' : 'non_retryable';
  }

  /** Healthy providers first, in configured order; then the ones cooling down, soonest back first. */
  #order(): TargetState[] {
    const now = this.#clock.now();
    const healthy = this.#targets.filter((target) => target.downUntil <= now);
    const down = this.#targets.filter((target) => target.downUntil > now).sort((a, b) => a.downUntil - b.downUntil);
    return [...healthy, ...down];
  }

  #current(): TargetState {
    return this.#order()[0]!;
  }
}

/**
 * 4xx statuses that say the provider or model cannot serve anyone with this configuration: a bad or
 * expired key (401), no credit (402), no access (403), an unknown model (404).
 */
const PROVIDER_WIDE_STATUSES: ReadonlySet<number> = new Set([401, 402, 403, 404]);

/** A non-retryable 4xx about this request alone (400, 413, 422 …), not about the provider. */
function isRequestRejection(classification: LlmErrorClassification): boolean {
  const { retryable, status } = classification;
  return !retryable && status !== null && status >= 400 && status < 500 && !PROVIDER_WIDE_STATUSES.has(status);
}

function errorMessage(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
