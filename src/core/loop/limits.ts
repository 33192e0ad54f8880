import { abortReason } from '../ports/clock.js';
import { budgetRefusedEnd } from './budget-gate.js';
import { buildRequest } from './build-request.js';
import { callModel } from './call-model.js';
import { commitStep } from './commit-step.js';
import { completeDecide } from './complete-decide.js';
import { emit } from './emit.js';
import { CONTINUE, type NextStep } from './next-step.js';
import { cancelledEnd, degradedEnd } from './run-outcomes.js';
import type { RunContext } from './run-context.js';
import { addUsage, usageRow } from './usage.js';

/** The notice asking the model to wrap up at the round limit. */
export const WRAP_UP_PROMPT = (maxRounds: number) =>
  `You have reached the maximum of ${maxRounds} rounds. Summarize what you accomplished and what remains.`;

/** Stop condition: the round limit is reached. */
export function roundLimitReached(ctx: RunContext): boolean {
  return ctx.state.round >= ctx.state.roundLimit;
}

/** Stop condition: this input's tokens crossed its budget (checked between rounds, so the crossing round finishes). */
export function budgetExceeded(ctx: RunContext, round = ctx.state.round): boolean {
  const budget = ctx.profile.maxTokensPerInput;
  if (budget === null || round < ctx.state.budgetGraceUntil) return false;
  return ctx.state.usage.promptTokens + ctx.state.usage.completionTokens >= budget;
}

/** Whether the round after this one may run a model turn: neither the round limit nor the budget stops it first. */
export function nextRoundAllowed(ctx: RunContext): boolean {
  return ctx.state.round + 1 < ctx.state.roundLimit && !budgetExceeded(ctx, ctx.state.round + 1);
}

/**
 * The round limit: one wrap-up call (persisted prompt, tools offered but not callable) whose summary
 * is persisted and reported as `hit_round_limit`, unless `complete.decide` extends the run.
 */
export async function wrapUp(ctx: RunContext): Promise<NextStep> {
  if (await completeDecide(ctx, 'hit_round_limit', '')) return CONTINUE;
  // The limit in force: the profile's, or a finalize window `complete.decide` granted.
  const prompt = WRAP_UP_PROMPT(ctx.state.roundLimit);
  const last = ctx.stored.window.at(-1);
  // Idempotent across a crash: the prompt may already be the last thing this input wrote.
  if (!(last?.inputSeq === ctx.params.input.seq && last.kind === 'notice' && last.message.content === prompt)) {
    await commitStep(ctx, { messages: [{ round: ctx.state.round, kind: 'notice', message: { role: 'user', content: prompt } }] });
  }
  emit(ctx, { type: 'status_changed', kind: 'hit_round_limit', maxRounds: ctx.state.roundLimit });
  if (ctx.params.signal.aborted) throw abortReason(ctx.params.signal);
  const request = buildRequest(ctx);
  if (request.tools.length > 0) request.toolChoice = 'none';
  const outcome = await callModel(ctx, request, ctx.state.round, 'wrap_up');
  if (outcome.kind === 'cancelled') return cancelledEnd(ctx, outcome.error, outcome.partialText);
  if (outcome.kind === 'degraded') return degradedEnd(ctx, outcome);
  if (outcome.kind === 'refused') return budgetRefusedEnd(ctx, outcome.error);
  addUsage(ctx, outcome.response, outcome.attempts);
  const summary = outcome.response.text;
  return {
    kind: 'finish',
    status: 'hit_round_limit',
    text: `[hit_round_limit]\n${summary}`,
    rounds: ctx.state.round,
    usageRounds: [usageRow(ctx, ctx.state.round, outcome.response, outcome.attempts)],
    ...(summary.trim() === '' ? {} : { messages: [{ round: ctx.state.round, message: { role: 'assistant', content: summary } }] }),
  };
}

/** The budget is spent: `budget_exceeded`, unless `complete.decide` grants a finalize window. */
export async function budgetStop(ctx: RunContext): Promise<NextStep> {
  const spent = ctx.state.usage.promptTokens + ctx.state.usage.completionTokens;
  emit(ctx, { type: 'status_changed', kind: 'budget_exceeded', budgetTokens: ctx.profile.maxTokensPerInput ?? 0, spentTokens: spent, rounds: ctx.state.round });
  if (await completeDecide(ctx, 'budget_exceeded', '')) return CONTINUE;
  return { kind: 'finish', status: 'budget_exceeded', text: '[budget_exceeded]' };
}
