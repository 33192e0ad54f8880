import { emit } from './emit.js';
import { hookScope, type RunContext } from './run-context.js';

/** Closes a round: `round.end` hook, `round_completed`, next index. */
export async function endRound(ctx: RunContext, hasTools: boolean, responseText: string): Promise<void> {
  if (ctx.deps.hooks.handles('round.end')) await ctx.deps.hooks.run('round.end', Object.assign(hookScope(ctx), { roundIndex: ctx.round, hasTools, responseText }));
  emit(ctx, { type: 'round_completed', roundIndex: ctx.round, hasTools });
  ctx.round += 1;
}
