import { estimateMessagesTokens, estimateTextTokens } from '../budget/index.js';
import { BudgetExceededError } from '../errors/index.js';
import type { BudgetRefusal, BudgetReservation, BudgetUnit } from '../ports/budgets.js';
import { guardedStoreCall } from '../ports/guard-store.js';
import type { LlmRequest, LlmResponse } from '../ports/llm.js';
import { picoToUsd } from '../pricing/index.js';
import { emit } from './emit.js';
import type { FinishStep } from './next-step.js';
import type { RunContext } from './run-context.js';

/**
 * A model call's hold on the budgets (docs/budgets.md): `free` when no budget applies (nothing to
 * settle), `held` until {@link settleCall}, or `refused` with the error the input ends with.
 */
export type BudgetHold = { kind: 'free' } | { kind: 'held'; callKey: string } | { kind: 'refused'; error: BudgetExceededError };

const FREE: BudgetHold = Object.freeze({ kind: 'free' });

/** Which model call of a round: the round's reply, the round-limit wrap-up, or a compaction summary. */
export type CallKind = 'model' | 'wrap_up' | 'compact';

/**
 * Reserves the call's worst case before it is made: the prompt estimate (messages, system prompt,
 * tool definitions) plus the output cap, and the same in picodollars at the model's prices (input
 * price for the prompt, output price for the cap). Retries of the call share the reservation.
 */
export async function reserveCall(ctx: RunContext, request: LlmRequest, kind: CallKind): Promise<BudgetHold> {
  const budgets = ctx.deps.budgets;
  if (budgets === undefined) return FREE;
  const callKey = `${ctx.params.input.seq}:${ctx.state.round}:${kind}`;
  const { tokens, picoUsd } = worstCase(ctx, request);
  const reservation = await guardedStoreCall('budgets.reserve', budgets.reserve({ sessionId: ctx.params.sessionId, leaseToken: ctx.params.leaseToken, callKey, tokens, picoUsd }));
  if (reservation.kind === 'none') return FREE;
  if (reservation.kind === 'reserved') return { kind: 'held', callKey };
  return { kind: 'refused', error: refusalError(reservation) };
}

/**
 * Settles the call to what it used (`response` null: it failed or was cancelled, zero), and emits
 * `budget_warning` for each threshold this settle crossed — exactly one settle fleet-wide crosses it.
 */
export async function settleCall(ctx: RunContext, hold: BudgetHold, response: LlmResponse | null): Promise<void> {
  const budgets = ctx.deps.budgets;
  if (hold.kind !== 'held' || budgets === undefined) return;
  const tokens = response === null ? 0 : response.usage.promptTokens + response.usage.completionTokens;
  const picoUsd = response === null ? 0 : (ctx.deps.prices?.cost(response.provider, response.model, response.usage) ?? null);
  const crossings = await guardedStoreCall('budgets.settle', budgets.settle({ sessionId: ctx.params.sessionId, callKey: hold.callKey, tokens, picoUsd }));
  for (const crossing of crossings) {
    emit(ctx, {
      type: 'budget_warning',
      budgetId: crossing.budgetId,
      scope: crossing.scope,
      unit: crossing.unit,
      period: crossing.period,
      threshold: crossing.threshold,
      limit: amount(crossing.unit, crossing.limit),
      used: amount(crossing.unit, crossing.used),
    });
  }
}

/**
 * Settles a call that ended in an exception at zero; a settle that fails as well is reported, not
 * thrown over the call's own error (the session's next reserve, or the sweeper, gives it back).
 */
export async function settleQuietly(ctx: RunContext, hold: BudgetHold): Promise<void> {
  try {
    await settleCall(ctx, hold, null);
  } catch (error) {
    ctx.deps.onObserverError?.(error);
  }
}

/**
 * How a refused call ends the input: `budget_exceeded`, keeping everything the run committed before,
 * with the refusing budget in the error's details.
 */
export function budgetRefusedEnd(ctx: RunContext, error: BudgetExceededError): FinishStep {
  const budget = error.details as unknown as BudgetRefusal;
  emit(ctx, { type: 'status_changed', kind: 'budget_exceeded', budgetId: budget.budgetId, scope: budget.scope, unit: budget.unit, period: budget.period, limit: budget.limit, used: budget.used, rounds: ctx.state.round });
  return { kind: 'finish', status: 'budget_exceeded', text: '[budget_exceeded]', error, reason: 'budget_exceeded', budget };
}

/** The call's worst case in tokens, and in picodollars (null when the model has no price). */
export function worstCase(ctx: RunContext, request: LlmRequest): { tokens: number; picoUsd: number | null } {
  let prompt = estimateMessagesTokens(request.messages);
  if (request.systemPrompt !== null) prompt += estimateTextTokens(request.systemPrompt);
  if (request.tools.length > 0) prompt += estimateTextTokens(JSON.stringify(request.tools));
  const output = request.maxTokens ?? ctx.profile.maxOutputTokens;
  const rates = ctx.deps.prices?.rates(ctx.deps.llm.provider, request.model ?? ctx.deps.llm.model) ?? null;
  return { tokens: prompt + output, picoUsd: rates === null ? null : prompt * rates.input + output * rates.output };
}

function refusalError(refusal: Extract<BudgetReservation, { kind: 'refused' }>): BudgetExceededError {
  const { budget, reason } = refusal;
  const limit = amount(budget.unit, refusal.limit);
  const used = amount(budget.unit, refusal.used);
  const reserved = amount(budget.unit, refusal.reserved);
  const what = `${budget.scope} budget ${budget.budgetId} (${budget.unit}, ${budget.period})`;
  const message =
    reason === 'unpriced_model'
      ? `${what} counts money and the model has no price: the call is refused`
      : `${what} has no room for the call: limit ${limit}, used ${used}, reserved by calls in flight ${reserved}`;
  const details: BudgetRefusal = Object.assign({}, budget, { limit, used, reserved, reason });
  return new BudgetExceededError(message, { details: details as unknown as Record<string, unknown> });
}

/** Tokens as they are; picodollars as USD. */
function amount(unit: BudgetUnit, value: number): number {
  return unit === 'usd' ? picoToUsd(value) : value;
}
