import { commitStep } from './commit-step.js';
import type { StepInput } from './step-input.js';
import { hookScope, type RunContext } from './run-context.js';

/**
 * The `complete.decide` hook at a terminal boundary. A `short_circuit` with a non-empty `inject`
 * keeps the run going: the injected text is appended as a user message (with `extra` messages such as
 * the reply that would have ended the run, in the same step) and the run gets `extraRounds` (≥ 1)
 * more rounds, not inheriting unused ones. Returns true when extended.
 */
export async function completeDecide(
  ctx: RunContext,
  reason: 'completed' | 'hit_round_limit' | 'budget_exceeded',
  finalText: string,
  extra: Pick<StepInput, 'messages' | 'usageRounds'> = {},
): Promise<boolean> {
  if (!ctx.deps.hooks.handles('complete.decide')) return false;
  const decide = Object.assign(hookScope(ctx), { reason, finalText, fireCount: ctx.state.completeDecideFires, inject: null as string | null, extraRounds: 1 });
  const directive = await ctx.deps.hooks.run('complete.decide', decide);
  if (directive !== 'short_circuit' || decide.inject === null || decide.inject.trim() === '') return false;
  ctx.state.completeDecideFires += 1;
  await commitStep(ctx, {
    messages: [...(extra.messages ?? []), { round: ctx.state.round, kind: 'notice', message: { role: 'user', content: decide.inject } }],
    ...(extra.usageRounds !== undefined ? { usageRounds: extra.usageRounds } : {}),
  });
  // Called between rounds: `ctx.state.round` is the first round of the window.
  ctx.state.roundLimit = ctx.state.round + Math.max(1, Math.floor(decide.extraRounds));
  ctx.state.budgetGraceUntil = ctx.state.roundLimit;
  return true;
}
