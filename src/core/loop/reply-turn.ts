import type { LlmResponse } from '../ports/llm.js';
import { OutputInvalidError } from '../errors/index.js';
import { compileResponseFormat, parseStructured } from '../structured-output/index.js';
import { commitStep } from './commit-step.js';
import type { StepMessageInput } from './step-input.js';
import { completeDecide } from './complete-decide.js';
import { endRound } from './end-round.js';
import { nextRoundAllowed } from './limits.js';
import { CONTINUE, type NextStep } from './next-step.js';
import { TRUNCATION_NOTICE } from './notices.js';
import type { RunContext } from './run-context.js';
import { checkSteering } from './steering.js';
import { usageRow } from './usage.js';

/**
 * A reply without tool calls would end the run — unless it was truncated (answered with a notice),
 * empty (retried: an empty reply is not a completion), fails the structured
 * output schema (one corrective round), steering input is waiting, or `complete.decide` extends it.
 */
export async function replyTurn(ctx: RunContext, response: LlmResponse, attempts: number): Promise<NextStep> {
  const round = ctx.state.round;
  const text = response.text;
  const usageRounds = [usageRow(ctx, round, response, attempts)];
  const assistant: StepMessageInput[] = text === '' ? [] : [{ round, message: { role: 'assistant', content: text } }];
  if (response.finishReason === 'length' && ctx.state.truncationStreak < ctx.profile.truncationNotices) {
    ctx.state.truncationStreak += 1;
    return continueWith(ctx, [...assistant, notice(round, TRUNCATION_NOTICE)], usageRounds, text);
  }
  ctx.state.truncationStreak = 0;
  if (text.trim() === '' && ctx.state.emptyStreak < ctx.profile.emptyResponseRetries) {
    ctx.state.emptyStreak += 1;
    return continueWith(ctx, [], usageRounds, text);
  }
  let output: unknown;
  if (ctx.profile.responseFormat !== null) {
    // Compiled at load: a format that does not compile refused the input before any round.
    const parsed = parseStructured(text, ctx.structuredValidator ?? compileResponseFormat(ctx.profile.responseFormat));
    if (!parsed.ok) {
      if (ctx.state.structuredRetries < 1) {
        ctx.state.structuredRetries += 1;
        const fix = `Your reply did not match the required JSON schema "${ctx.profile.responseFormat.name}": ${parsed.message}. Reply again with only a JSON object that matches it.`;
        return continueWith(ctx, [...assistant, notice(round, fix)], usageRounds, text);
      }
      const error = new OutputInvalidError(`structured output invalid: ${parsed.message}`, { details: { reason: parsed.reason } });
      await endRound(ctx, false, text);
      return { kind: 'finish', status: 'failed', text, messages: assistant, usageRounds, error, reason: 'error', rounds: round + 1 };
    }
    output = parsed.value;
  }
  const steering = await checkSteering(ctx, { fresh: true });
  // Another round for them, unless the round limit or the budget would stop it before its model
  // turn: then this reply ends the run, and they run after it as inputs of their own.
  if ((steering.steerable.length > 0 || steering.interrupt) && nextRoundAllowed(ctx)) return continueWith(ctx, assistant, usageRounds, text);
  // The terminal round ends like any other (round.end, round_completed) before complete.decide, so its hooks see the round closed.
  await endRound(ctx, false, text);
  if (await completeDecide(ctx, 'completed', text, { messages: assistant, usageRounds })) return CONTINUE;
  return { kind: 'finish', status: 'completed', text, messages: assistant, usageRounds, output, rounds: round + 1 };
}

/** A reply with tool calls is not empty: the empty-reply streak starts over. */
export function resetEmptyStreak(ctx: RunContext): void {
  ctx.state.emptyStreak = 0;
}

function notice(round: number, content: string): StepMessageInput {
  return { round, kind: 'notice', message: { role: 'user', content } };
}

async function continueWith(ctx: RunContext, messages: StepMessageInput[], usageRounds: ReturnType<typeof usageRow>[], text: string): Promise<NextStep> {
  await commitStep(ctx, { messages, usageRounds });
  await endRound(ctx, false, text);
  return CONTINUE;
}
