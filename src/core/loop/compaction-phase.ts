import { buildSummaryRequest, compactNoteMessage } from '../compaction/index.js';
import { estimateMessagesTokens } from '../budget/index.js';
import { CancelledError } from '../errors/index.js';
import { planWindowFold } from '../window/index.js';
import type { LlmRequest } from '../ports/llm.js';
import { reserveCall, settleCall, settleQuietly } from './budget-gate.js';
import { commitStep } from './commit-step.js';
import { emit } from './emit.js';
import { hookScope, type RunContext } from './run-context.js';

/**
 * Folds the oldest whole inputs into one compact note when the window crosses its budget
 * (`contextBudgetTokens × compactTriggerRatio`). The summary call is soft-failing: an error leaves
 * the window as it was and the run goes on. The fold and the note are one step, so a crash never
 * leaves half a compaction.
 */
export async function maybeCompact(ctx: RunContext): Promise<void> {
  const { profile, deps } = ctx;
  const plan = planWindowFold(ctx.stored.window, {
    contextBudgetTokens: profile.contextBudgetTokens,
    triggerRatio: profile.compactTriggerRatio,
    keepLastInputs: profile.compactKeepLastInputs,
  });
  if (plan === null) return;
  if (deps.hooks.handles('compact.before')) {
    const directive = await deps.hooks.run('compact.before', Object.assign(hookScope(ctx), { roundIndex: ctx.state.round, estimatedTokens: plan.estimatedTokensBefore }));
    if (directive === 'skip') return;
  }
  emit(ctx, { type: 'status_changed', kind: 'auto_compact', phase: 'started', beforeTokens: plan.estimatedTokensBefore, afterTokens: null });
  const summaryRequest = buildSummaryRequest(plan.messagesToSummarize);
  const request: LlmRequest = {
    sessionId: ctx.params.sessionId,
    model: profile.compactModel ?? profile.model,
    systemPrompt: summaryRequest.systemPrompt,
    messages: summaryRequest.messages,
    cacheBreakpoint: null,
    tools: [],
    toolChoice: null,
    maxTokens: profile.maxOutputTokens,
    temperature: null,
    responseFormat: null,
  };
  // The summary is a model call like any other: it reserves on the budgets. Refused, the window
  // stays as it is, and the round's own call meets the same refusal.
  const hold = await reserveCall(ctx, request, 'compact');
  if (hold.kind === 'refused') {
    emit(ctx, { type: 'status_changed', kind: 'auto_compact', phase: 'failed', beforeTokens: plan.estimatedTokensBefore, afterTokens: null, error: hold.error.message });
    return;
  }
  let summary: string;
  try {
    let response;
    try {
      response = await deps.llm.complete(request, { signal: ctx.params.signal });
    } catch (error) {
      await settleQuietly(ctx, hold);
      throw error;
    }
    await settleCall(ctx, hold, response);
    summary = response.text.trim();
    if (summary === '') throw new Error('the summary call returned no text');
  } catch (error) {
    if (error instanceof CancelledError || ctx.params.signal.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    emit(ctx, { type: 'status_changed', kind: 'auto_compact', phase: 'failed', beforeTokens: plan.estimatedTokensBefore, afterTokens: null, error: message });
    return;
  }
  const note = compactNoteMessage(summary);
  const afterTokens = plan.estimatedTokensAfterWithoutNote + estimateMessagesTokens([note]);
  await commitStep(ctx, {
    messages: [{ round: ctx.state.round, kind: 'compact_note', message: note }],
    compaction: {
      foldSeqs: plan.foldSeqs,
      record: {
        inputSeq: ctx.params.input.seq,
        fromSeq: plan.fromSeq,
        toSeq: plan.toSeq,
        estimatedTokensBefore: plan.estimatedTokensBefore,
        estimatedTokensAfter: afterTokens,
        model: profile.compactModel ?? profile.model,
      },
    },
  });
  emit(ctx, { type: 'status_changed', kind: 'auto_compact', phase: 'completed', beforeTokens: plan.estimatedTokensBefore, afterTokens });
  if (deps.hooks.handles('compact.after')) {
    await deps.hooks.run('compact.after', Object.assign(hookScope(ctx), { roundIndex: ctx.state.round, foldedMessages: plan.foldSeqs.length, beforeTokens: plan.estimatedTokensBefore, afterTokens }));
  }
}
