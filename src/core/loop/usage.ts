import type { LlmResponse, LlmUsage } from '../ports/llm.js';
import type { UsageRoundWrite } from '../ports/session-store.js';
import { emit } from './emit.js';
import type { RunContext } from './run-context.js';

/** Adds one call's usage to the input's total (`llmCalls` counts every attempt, retries included). */
export function addUsage(ctx: RunContext, usage: LlmUsage, attempts: number): void {
  ctx.state.usage.promptTokens += usage.promptTokens;
  ctx.state.usage.completionTokens += usage.completionTokens;
  ctx.state.usage.cachedTokens += usage.cachedTokens;
  ctx.state.usage.cacheWriteTokens += usage.cacheWriteTokens;
  ctx.state.usage.reasoningTokens += usage.reasoningTokens;
  ctx.state.usage.totalTokens += usage.totalTokens;
  ctx.state.usage.llmCalls += attempts;
  emit(ctx, { type: 'usage_updated', roundIndex: ctx.state.round, usage });
}

/** Counts attempts that got no reply (a degraded call's): requests made, as a retried call's attempts are. */
export function addFailedAttempts(ctx: RunContext, attempts: number): void {
  ctx.state.usage.llmCalls += attempts;
}

/** The usage row of one round; rewriting the same round after a takeover replaces it. */
export function usageRow(ctx: RunContext, round: number, response: LlmResponse, attempts: number): UsageRoundWrite {
  return {
    inputSeq: ctx.params.input.seq,
    round,
    provider: response.provider,
    model: response.model,
    llmCalls: attempts,
    promptTokens: response.usage.promptTokens,
    completionTokens: response.usage.completionTokens,
    cachedTokens: response.usage.cachedTokens,
    cacheWriteTokens: response.usage.cacheWriteTokens,
    reasoningTokens: response.usage.reasoningTokens,
    totalTokens: response.usage.totalTokens,
  };
}
