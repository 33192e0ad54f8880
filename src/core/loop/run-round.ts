import type { ToolCall } from '../messages.js';
import type { LlmResponse } from '../ports/llm.js';
import { parseToolArguments } from '../tools/index.js';
import { windowCallIds, windowHasFold } from '../window/index.js';
import { commitStep } from './commit-step.js';
import { emit } from './emit.js';
import { endRound } from './end-round.js';
import { modelTurn } from './model-turn.js';
import { CONTINUE, type NextStep } from './next-step.js';
import { replyTurn, resetEmptyStreak } from './reply-turn.js';
import { TRUNCATION_NOTICE } from './notices.js';
import type { RunContext } from './run-context.js';
import { ledgerWrite } from './pending-results.js';
import { afterToolPhase, runToolPhase, startedWithAssistantStep } from './tool-phase.js';
import { addUsage, usageRow } from './usage.js';

/** Re-exported where it was first defined: the provider adapters' tests name it from here. */
export { TRUNCATION_NOTICE } from './notices.js';

/**
 * One round: the model's reply, then either its tool calls (answered through the ledger) or the end
 * of the run. Returns how the run ends, or {@link CONTINUE} to go on with the next round.
 */
export async function runRound(ctx: RunContext): Promise<NextStep> {
  emit(ctx, { type: 'round_started', roundIndex: ctx.state.round });
  const turn = await modelTurn(ctx);
  if (turn.kind !== 'response') return turn;
  const { response, attempts } = turn;
  addUsage(ctx, response, attempts);
  const calls = normaliseToolCalls(response.toolCalls, ctx);
  emit(ctx, { type: 'round_tools_present', roundIndex: ctx.state.round, hasTools: calls.length > 0 });
  if (calls.length === 0) return replyTurn(ctx, response, attempts);
  return toolTurn(ctx, response, calls, attempts);
}

async function toolTurn(ctx: RunContext, response: LlmResponse, calls: ToolCall[], attempts: number): Promise<NextStep> {
  const round = ctx.state.round;
  // The calls' `started` rows go with the message when nothing can come between (see the function).
  const recordedStarted = startedWithAssistantStep(ctx, calls);
  await commitStep(ctx, {
    ...(recordedStarted.length > 0 ? { toolCalls: recordedStarted.map((call) => ledgerWrite(ctx, call, round, 'started')) } : {}),
    messages: [{ round, message: { role: 'assistant', content: response.text, toolCalls: calls } }],
    usageRounds: [usageRow(ctx, round, response, attempts)],
    pending: {
      assistantSeq: ctx.stored.lastMessageSeq + 1,
      round,
      inputSeq: ctx.params.input.seq,
      toolCalls: calls,
      unresolvedIds: calls.map((call) => call.id),
      interactions: [],
      allowedTools: ctx.allowedTools,
    },
  });
  resetEmptyStreak(ctx);
  const phase = await runToolPhase(ctx, calls, round, response.text, new Set(recordedStarted.map((call) => call.id)));
  if (phase.kind !== 'done') return afterToolPhase(phase, response.text, round + 1);
  // Truncated arguments are never repaired (they would write half files); the model is told instead,
  // after ALL the round's tool results so no message sits between a call and its result.
  const truncated = response.finishReason === 'length' && calls.some((call) => !parseToolArguments(call.arguments).ok);
  if (truncated) await commitStep(ctx, { messages: [{ round, kind: 'notice', message: { role: 'user', content: TRUNCATION_NOTICE } }] });
  await endRound(ctx, true, response.text);
  return CONTINUE;
}

/** OpenAI refuses a tool call id longer than this in the history it is sent back. */
const MAX_CALL_ID_CHARS = 40;

/**
 * Every call gets a non-empty id of at most 40 characters, unique within the session (some
 * endpoints omit ids, reuse `call_0` every turn or mint long ones; the ledger, the idempotency key `<sessionId>:<toolCallId>` and the
 * tool-result pairing all key on it). The window's ids are checked; once history was folded
 * (a compact note is in the window) the folded calls' ids are out of sight but still in the ledger,
 * so every id is made unique by its input, round and position instead.
 */
function normaliseToolCalls(calls: readonly ToolCall[], ctx: RunContext): ToolCall[] {
  if (calls.length === 0) return [];
  const inWindow = windowCallIds(ctx.stored.window);
  const folded = windowHasFold(ctx.stored.window);
  const given = new Set<string>();
  const taken = (id: string) => inWindow.has(id) || given.has(id);
  return calls.map((call, index) => {
    const suffix = `_${ctx.params.input.seq}_${ctx.state.round}_${index}`;
    let id = call.id.trim() === '' ? `call${suffix}` : call.id;
    // The suffix makes the id unique, so the provider's part may be cut to keep it short. An id over
    // the limit is renamed too: OpenAI refuses it, the ledger takes 500 characters, and an answer to
    // its question names it (`submit.interactionId`, at most 200).
    if (folded || id.length > MAX_CALL_ID_CHARS || taken(id)) id = `${id.slice(0, Math.max(0, MAX_CALL_ID_CHARS - suffix.length))}${suffix}`;
    // A provider may have used that very name for another call of this reply or of the window.
    for (let extra = 1, base = id; taken(id); extra += 1) id = `${base}_${extra}`;
    given.add(id);
    return Object.assign({}, call, { id });
  });
}
