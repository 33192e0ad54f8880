import type { LlmResponse } from '../ports/llm.js';
import { budgetRefusedEnd } from './budget-gate.js';
import { buildRequest } from './build-request.js';
import { callModel } from './call-model.js';
import { commitStep } from './commit-step.js';
import type { FinishStep } from './next-step.js';
import { cancelledEnd, degradedEnd } from './run-outcomes.js';
import { hookScope, type RunContext } from './run-context.js';
import { addUsage, usageRow } from './usage.js';

/** This round's reply to go on with, or how the run ends instead (a hook's break, a cancel, a degraded call). */
export type ModelTurn = { kind: 'response'; response: LlmResponse; attempts: number } | FinishStep;

/**
 * Asks the model for this round's reply, with the `llm.before`/`llm.after` hooks around the call:
 * `llm.before` may persist messages, edit the request copy (its messages too, in place: they are a
 * deep copy), answer instead of the model
 * (`short_circuit`) or stop (`break`); `llm.after` may replace the reply or stop after persisting it.
 */
export async function modelTurn(ctx: RunContext): Promise<ModelTurn> {
  const round = ctx.state.round;
  let request = buildRequest(ctx);
  if (ctx.deps.hooks.handles('llm.before')) {
    // The hook gets its own copy of the messages: the request's are the window's rows themselves
    // (shared with later rounds, and frozen when the store's window cache holds them), so an edit in
    // place must reach this request only. A copy of the window per round, paid only with this hook.
    request = Object.assign({}, request, { messages: structuredClone(request.messages) });
    const before = Object.assign(hookScope(ctx), { roundIndex: round, request, output: null as LlmResponse | null, persistMessages: [] as typeof request.messages });
    const directive = await ctx.deps.hooks.run('llm.before', before);
    if (before.persistMessages.length > 0) {
      await commitStep(ctx, { messages: before.persistMessages.map((message) => ({ round, message })) });
      before.request.messages = [...before.request.messages, ...before.persistMessages];
    }
    request = before.request;
    if (directive === 'break') return { kind: 'finish', status: 'completed', text: '', reason: 'hook_break' };
    if (directive === 'short_circuit') {
      if (before.output === null) throw new TypeError('an llm.before hook returned short_circuit without setting ctx.output');
      return { kind: 'response', response: before.output, attempts: 0 };
    }
  }
  const outcome = await callModel(ctx, request, round);
  if (outcome.kind === 'cancelled') return cancelledEnd(ctx, outcome.error, outcome.partialText);
  if (outcome.kind === 'degraded') return degradedEnd(ctx, outcome);
  if (outcome.kind === 'refused') return budgetRefusedEnd(ctx, outcome.error);
  let response = outcome.response;
  if (ctx.deps.hooks.handles('llm.after')) {
    const after = Object.assign(hookScope(ctx), { roundIndex: round, response });
    const directive = await ctx.deps.hooks.run('llm.after', after);
    response = after.response;
    if (directive === 'break') {
      // The call was made: its usage counts like any other round's.
      addUsage(ctx, response, outcome.attempts);
      const messages = response.text === '' ? [] : [{ round, message: { role: 'assistant' as const, content: response.text } }];
      const usageRounds = [usageRow(ctx, round, response, outcome.attempts)];
      return { kind: 'finish', status: 'completed', text: response.text, messages, usageRounds, reason: 'hook_break', rounds: round + 1 };
    }
  }
  return { kind: 'response', response, attempts: outcome.attempts };
}
