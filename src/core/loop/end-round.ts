import { emit } from './emit.js';
import { hookScope, type RunContext } from './run-context.js';

/** Closes a round: `round.end` hook, `round_completed`, next index. */
export async function endRound(ctx: RunContext, hasTools: boolean, responseText: string): Promise<void> {
  if (ctx.deps.hooks.handles('round.end')) await ctx.deps.hooks.run('round.end', Object.assign(hookScope(ctx), { roundIndex: ctx.state.round, hasTools, responseText }));
  emit(ctx, { type: 'round_completed', roundIndex: ctx.state.round, hasTools });
  ctx.state.round += 1;
}

/**
 * Closes the round whose open calls a previous holder left and this run answered (this input's own,
 * not closed yet): the run goes on at the round after it.
 */
export function endRecoveredRound(ctx: RunContext, round: number): Promise<void> {
  ctx.state.round = round;
  // Not async itself: awaiting it costs exactly what awaiting `endRound` does.
  return endRound(ctx, true, '');
}
