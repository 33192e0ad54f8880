import type { ToolCall } from '../core/messages.js';
import { systemClock, type Clock } from '../core/ports/clock.js';
import type { FinishReason, Llm, LlmCallOptions, LlmRequest, LlmResponse, LlmUsage } from '../core/ports/llm.js';
import { offlineReply } from './offline-reply.js';

/** One scripted reply. */
export interface ScriptedReply {
  text?: string;
  /** Streamed as these deltas (their concatenation must equal `text` when both are given). */
  chunks?: string[];
  thinking?: string;
  toolCalls?: { name: string; arguments?: string | Record<string, unknown>; id?: string }[];
  finishReason?: FinishReason;
  rawFinishReason?: string;
  usage?: Partial<LlmUsage>;
  /** Wait this long (abortable) before answering. */
  delayMs?: number;
  /** Wait for this promise (abortable) before answering: lets a test hold a call in flight. */
  gate?: Promise<void>;
}

/** A scripted failure: stream `chunksBefore` first, then throw `error`. */
export interface ScriptedFailure {
  error: unknown;
  chunksBefore?: string[];
}

export type ScriptStep = ScriptedReply | ScriptedFailure | ((request: LlmRequest, call: number) => ScriptedReply | ScriptedFailure);

export interface ScriptedLlmOptions {
  model?: string;
  /**
   * What to do when the script runs out: `error` (tests) or `echo` (the offline model): echo the last
   * user message, or call the tool it names as `/tool <name> <JSON arguments>` ({@link offlineReply}).
   */
  whenExhausted?: 'error' | 'echo';
  clock?: Clock;
  /** Keep every request in `requests` (tests). Default true; a long-running worker turns it off. */
  recordRequests?: boolean;
}

/**
 * An `Llm` that plays a script: replies, streamed chunks, tool calls, errors and delays. It records
 * every request so tests can assert what the model was shown. Used by unit tests and, in `echo`
 * mode, as the offline provider of the demo fleet (echoes, and calls tools on `/tool` inputs).
 */
export class ScriptedLlm implements Llm {
  readonly provider = 'scripted';
  readonly model: string;
  readonly requests: LlmRequest[] = [];
  readonly #script: ScriptStep[];
  readonly #whenExhausted: 'error' | 'echo';
  readonly #clock: Clock;
  readonly #record: boolean;
  #calls = 0;

  constructor(script: ScriptStep[] = [], options: ScriptedLlmOptions = {}) {
    this.#script = [...script];
    this.model = options.model ?? 'scripted';
    this.#whenExhausted = options.whenExhausted ?? 'error';
    this.#clock = options.clock ?? systemClock;
    this.#record = options.recordRequests ?? true;
  }

  /** Appends more steps (e.g. after inspecting what the loop did so far). */
  push(...steps: ScriptStep[]): void {
    this.#script.push(...steps);
  }

  get remaining(): number {
    return this.#script.length;
  }

  async complete(request: LlmRequest, options: LlmCallOptions): Promise<LlmResponse> {
    const call = this.#calls++;
    if (this.#record) this.requests.push(structuredClone(request));
    const step = this.#next(request, call);
    if ('error' in step) {
      for (const chunk of step.chunksBefore ?? []) options.handlers?.onTextDelta?.(chunk);
      throw step.error;
    }
    if (step.gate !== undefined) await abortable(step.gate, options.signal);
    if (step.delayMs !== undefined) await this.#clock.sleep(step.delayMs, options.signal);
    if (options.signal.aborted) throw options.signal.reason ?? new Error('aborted');
    if (step.thinking !== undefined) options.handlers?.onThinkingDelta?.(step.thinking);
    const text = step.text ?? step.chunks?.join('') ?? '';
    for (const chunk of step.chunks ?? (text === '' ? [] : [text])) options.handlers?.onTextDelta?.(chunk);
    // Default ids depend only on the request, so a replay after a crash produces the same ids.
    const toolCalls = (step.toolCalls ?? []).map((call, index): ToolCall => ({
      id: call.id ?? `call_${request.messages.length}_${index}`,
      name: call.name,
      arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
    }));
    const finishReason = step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop');
    return {
      text,
      thinking: step.thinking ?? '',
      toolCalls,
      finishReason,
      rawFinishReason: step.rawFinishReason ?? finishReason,
      usage: usageOf(step.usage, request, text),
      model: request.model ?? this.model,
      provider: this.provider,
    };
  }

  #next(request: LlmRequest, call: number): ScriptedReply | ScriptedFailure {
    const step = this.#script.shift();
    if (step === undefined) {
      if (this.#whenExhausted === 'echo') return offlineReply(request);
      throw new Error(`ScriptedLlm: script exhausted at call ${call + 1}`);
    }
    return typeof step === 'function' ? step(request, call) : step;
  }
}

function usageOf(partial: Partial<LlmUsage> | undefined, request: LlmRequest, text: string): LlmUsage {
  const promptTokens = partial?.promptTokens ?? Math.ceil(JSON.stringify(request.messages).length / 4);
  const completionTokens = partial?.completionTokens ?? Math.ceil(text.length / 4);
  return {
    promptTokens,
    completionTokens,
    cachedTokens: partial?.cachedTokens ?? 0,
    cacheWriteTokens: partial?.cacheWriteTokens ?? 0,
    reasoningTokens: partial?.reasoningTokens ?? 0,
    totalTokens: partial?.totalTokens ?? promptTokens + completionTokens,
  };
}

function abortable(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
