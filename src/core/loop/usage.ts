import type { LlmResponse } from '../ports/llm.js';
import type { UsageRoundWrite } from '../ports/session-store.js';
import { emit } from './emit.js';
import { addCost } from './recorded-progress.js';
import type { RunContext } from './run-context.js';

/**
 * Adds one reply's usage to the input's total (`llmCalls` counts every attempt, retries included) and
 * its cost ({@link callCost}: the same pure function of the reply its usage row is written with).
 */
export function addUsage(ctx: RunContext, response: LlmResponse, attempts: number): void {
  const usage = response.usage;
  ctx.state.usage.promptTokens += usage.promptTokens;
  ctx.state.usage.completionTokens += usage.completionTokens;
  ctx.state.usage.cachedTokens += usage.cachedTokens;
  ctx.state.usage.cacheWriteTokens += usage.cacheWriteTokens;
  ctx.state.usage.reasoningTokens += usage.reasoningTokens;
  ctx.state.usage.totalTokens += usage.totalTokens;
  ctx.state.usage.llmCalls += attempts;
  addCost(ctx.state.usage, callCost(ctx, response, attempts));
  emit(ctx, { type: 'usage_updated', roundIndex: ctx.state.round, usage });
}

/** Counts attempts that got no reply (a degraded call's): requests made, as a retried call's attempts are. */
export function addFailedAttempts(ctx: RunContext, attempts: number): void {
  ctx.state.usage.llmCalls += attempts;
}

/**
 * What one reply cost in picodollars at the worker's prices, by the provider and model that answered
 * (a fallback's, a dated snapshot's); null when the table has no price for it or there is no table.
 * A reply no request was made for (an `llm.before` hook's short circuit, 0 attempts) cost nothing.
 */
export function callCost(ctx: RunContext, response: LlmResponse, attempts: number): number | null {
  if (attempts === 0) return 0;
  return ctx.deps.prices?.cost(response.provider, response.model, response.usage) ?? null;
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
    costPicoUsd: callCost(ctx, response, attempts),
  };
}
