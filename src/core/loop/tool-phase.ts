import { CancelledError } from '../errors/index.js';
import type { ToolCall } from '../messages.js';
import { parseToolArguments, REQUEST_USER_INPUT, runToolBatch, type ToolOutcome } from '../tools/index.js';
import { closeOpenCalls } from './close-open-calls.js';
import { commitResult } from './commit-result.js';
import { commitStep } from './commit-step.js';
import { emit } from './emit.js';
import { ledgerWrite } from './pending-results.js';
import { hookScope, type RunContext } from './run-context.js';
import { askUser } from './ask-user.js';
import { cancelledSkipContent, isFinishingCancel } from './run-outcomes.js';
import { waitForInput, type EndStep } from './next-step.js';
import { answerSpawn, deliveredOnce, spawnCalls, startChildren } from './spawn-children.js';
import { toolSpans } from './trace-spans.js';

/**
 * How a tool phase ended: every call answered, a question waiting for the user, calls waiting for
 * child sessions, or a hook's break.
 */
export type ToolPhaseResult = { kind: 'done' } | { kind: 'waiting' } | { kind: 'children'; awaiting: string[] } | { kind: 'break'; reason: string };

const IN_DOUBT_FAIL =
  'Error: this tool call was interrupted by a worker failure and its outcome is unknown. It may or may not have taken effect; check before repeating it.';

/**
 * Answers the open tool calls of a round, in model order, through the ledger: each call is recorded
 * `started` before it runs and its result is committed with the ledger's end status and the narrowed
 * pending state in one step. Hooks may skip calls or stop the batch; whatever is left unanswered is
 * closed with a synthetic result before returning.
 */
export async function runToolPhase(
  ctx: RunContext,
  calls: ToolCall[],
  round: number,
  assistantText = '',
  recordedStarted: ReadonlySet<string> = new Set(),
): Promise<ToolPhaseResult> {
  const { hooks } = ctx.deps;
  if (hooks.handles('round.decide')) {
    const decide = Object.assign(hookScope(ctx), { roundIndex: round, toolCalls: calls, assistantText, output: '[skipped by round_decide hook]' });
    const directive = await hooks.run('round.decide', decide);
    if (directive === 'skip') return closeAll(ctx, calls, decide.output, round, { kind: 'done' });
    if (directive === 'break') return closeAll(ctx, calls, '[skipped: round_decide hook stopped the run]', round, { kind: 'break', reason: 'hook_break' });
  }
  const ask = calls.find((call) => call.name === REQUEST_USER_INPUT && ctx.tools.has(REQUEST_USER_INPUT));
  if (ask !== undefined) {
    if (await askUser(ctx, calls, ask, round)) return { kind: 'waiting' };
    calls = calls.filter((call) => call !== ask);
  }
  if (hooks.handles('tools.batch.before')) {
    const batch = Object.assign(hookScope(ctx), { roundIndex: round, toolCalls: calls, output: '[skipped by batch hook]' });
    if ((await hooks.run('tools.batch.before', batch)) === 'skip') return closeAll(ctx, calls, batch.output, round, { kind: 'done' });
  }
  const spawns = spawnCalls(ctx, calls);
  const result = spawns.length === 0 ? await executeCalls(ctx, calls, round, recordedStarted) : await callsWithChildren(ctx, calls, spawns, round, recordedStarted);
  if (hooks.handles('tools.batch.after')) await hooks.run('tools.batch.after', Object.assign(hookScope(ctx), { roundIndex: round, toolCalls: calls }));
  return result.kind === 'stopped' ? DONE : result;
}

const DONE: ToolPhaseResult = Object.freeze({ kind: 'done' });

/**
 * A round with `spawn_agent` calls (docs/child-sessions.md): every child starts first, so all run
 * while the other calls do; then the calls are answered in model order, the other tools in batches
 * between the spawn calls. A spawn call whose child has not answered stops the pass: it and every
 * call after it wait (results stay in call order, I4), and the run parks on the spawn calls that
 * wait. Woken, the run answers them and runs the calls after them.
 */
async function callsWithChildren(ctx: RunContext, calls: ToolCall[], spawns: ToolCall[], round: number, recordedStarted: ReadonlySet<string>): Promise<ToolPhaseResult | { kind: 'stopped' }> {
  const started = await startChildren(ctx, spawns);
  const delivered = deliveredOnce(ctx, started);
  const isSpawn = new Set(spawns);
  for (let index = 0; index < calls.length; ) {
    const call = calls[index]!;
    if (!isSpawn.has(call)) {
      let end = index;
      while (end < calls.length && !isSpawn.has(calls[end]!)) end += 1;
      const batch = await executeCalls(ctx, calls.slice(index, end), round, recordedStarted);
      if (batch.kind === 'stopped') {
        await closeOpenCalls(ctx, calls.slice(end).filter((later) => ctx.stored.pending?.unresolvedIds.includes(later.id) === true), BATCH_STOPPED, round);
        return batch;
      }
      index = end;
      continue;
    }
    if (!(await answerSpawn(ctx, call, started.answers.get(call.id)!, round, delivered))) {
      const awaiting = calls.slice(index).filter((later) => isSpawn.has(later) && started.answers.get(later.id)!.kind === 'wait');
      return { kind: 'children', awaiting: awaiting.map((waiting) => waiting.id) };
    }
    index += 1;
  }
  return { kind: 'done' };
}

/**
 * How the run ends after a tool phase that did not answer every call: a waiting question ends it
 * `waiting_for_input`, calls waiting for children park it, a hook's break ends it `completed`;
 * `text` is the reply that asked for the calls.
 */
export function afterToolPhase(phase: Exclude<ToolPhaseResult, { kind: 'done' }>, text: string, rounds?: number): EndStep {
  if (phase.kind === 'waiting') return waitForInput(text, rounds);
  if (phase.kind === 'children') return { kind: 'wait', reason: 'waiting_for_children', awaiting: phase.awaiting, text };
  return rounds === undefined ? { kind: 'finish', status: 'completed', text, reason: phase.reason } : { kind: 'finish', status: 'completed', text, reason: phase.reason, rounds };
}

async function closeAll(ctx: RunContext, calls: ToolCall[], content: string, round: number, result: ToolPhaseResult): Promise<ToolPhaseResult> {
  await closeOpenCalls(ctx, calls, content, round);
  return result;
}

/**
 * Whether the ledger's `started` rows of a round's calls may be written in the step that commits the
 * assistant message asking for them, instead of one step per call just before it runs (I5): one
 * commit per call fewer. Only when nothing can decide between the two whether a call runs — no
 * `round.decide`, `tools.batch.before` or `tool.before` hook, no `request_user_input` — and every
 * call's tool is declared `retry`. A crash in between then leaves a call that never ran recorded as
 * started: in doubt, and `retry` runs it again — what would have happened had its start not been
 * recorded (plus a `tool_call_in_doubt` event and a second attempt on its ledger row). A `fail` tool
 * must not be told "outcome unknown" about a call that never ran, so its start keeps its own step.
 */
export function startsWithAssistantStep(ctx: RunContext, calls: readonly ToolCall[]): boolean {
  const { hooks } = ctx.deps;
  if (hooks.handles('round.decide') || hooks.handles('tools.batch.before') || hooks.handles('tool.before')) return false;
  return calls.every((call) => call.name !== REQUEST_USER_INPUT && ctx.tools.get(call.name)?.policy === 'retry');
}

/**
 * The calls whose `started` rows go with the assistant message (see {@link startsWithAssistantStep}):
 * none in a round with `spawn_agent` calls. Those the loop runs itself, and the calls after one may
 * wait, unrun, for its child: recorded started, they would read as in doubt when the run wakes.
 */
export function startedWithAssistantStep(ctx: RunContext, calls: readonly ToolCall[]): ToolCall[] {
  return spawnCalls(ctx, calls).length === 0 && startsWithAssistantStep(ctx, calls) ? [...calls] : [];
}

/**
 * tool.before for every call first (in order), in-doubt resolution, then the batch itself. Calls in
 * `recordedStarted` had their `started` row committed with the assistant message: their start only
 * announces them.
 */
async function executeCalls(ctx: RunContext, calls: ToolCall[], round: number, recordedStarted: ReadonlySet<string>): Promise<{ kind: 'done' } | { kind: 'stopped' }> {
  const runnable: ToolCall[] = [];
  for (const call of calls) {
    const prepared = await beforeCall(ctx, call, round);
    if (prepared !== null) runnable.push(prepared);
  }
  const flusher = new ResultFlusher(ctx, runnable, round);
  const spans = toolSpans(ctx);
  try {
    await runToolBatch(ctx.tools, runnable, {
      sessionId: ctx.params.sessionId,
      signal: ctx.params.signal,
      clock: ctx.deps.clock,
      maxResultChars: ctx.profile.maxToolResultChars,
      concurrency: ctx.profile.toolConcurrency,
      onStart: (call) => {
        spans?.start(call);
        return recordedStarted.has(call.id) ? announceStart(ctx, call) : startCall(ctx, call, round);
      },
      onFinish: (outcome) => {
        spans?.finish(outcome);
        return flusher.finished(outcome);
      },
    });
  } catch (error) {
    spans?.endOpen();
    // A call that finished ran: when a break or a cancel ends the batch, its real result is recorded,
    // not a skipped one (I5), after closing the earlier calls that never finished.
    await flusher.flushFinished(closingContent(error));
    if (!(error instanceof BatchStopped)) throw error;
    const open = runnable.filter((call) => ctx.stored.pending?.unresolvedIds.includes(call.id) === true);
    await closeOpenCalls(ctx, open, BATCH_STOPPED, round);
    return { kind: 'stopped' };
  }
  return { kind: 'done' };
}

/** Returns the call to run (arguments possibly rewritten), or null when it was answered here. */
async function beforeCall(ctx: RunContext, call: ToolCall, round: number): Promise<ToolCall | null> {
  const doubt = ctx.state.inDoubt.get(call.id);
  if (doubt !== undefined) {
    const policy = ctx.tools.get(call.name)?.policy ?? 'fail';
    emit(ctx, { type: 'tool_call_in_doubt', name: call.name, toolCallId: call.id, policy });
    ctx.state.inDoubt.delete(call.id);
    if (policy === 'fail') {
      // Resolved: the model was told the outcome is unknown, so the ledger row is closed, not left open.
      await commitResult(ctx, call, round, IN_DOUBT_FAIL, true, ledgerWrite(ctx, call, round, 'failed', { errorCode: 'tool.in_doubt' }));
      return null;
    }
  }
  if (!ctx.deps.hooks.handles('tool.before')) return call;
  const parsed = parseToolArguments(call.arguments);
  const before = Object.assign(hookScope(ctx), { roundIndex: round, toolCall: call, toolArgs: parsed.ok ? parsed.args : null, output: '[skipped by hook]' });
  if ((await ctx.deps.hooks.run('tool.before', before)) === 'skip') {
    await commitResult(ctx, call, round, before.output, false, ledgerWrite(ctx, call, round, 'aborted'));
    return null;
  }
  // Handlers may replace or edit the arguments object; what they leave is what runs.
  return before.toolArgs === null ? call : Object.assign({}, call, { arguments: JSON.stringify(before.toolArgs) });
}

async function startCall(ctx: RunContext, call: ToolCall, round: number): Promise<void> {
  await commitStep(ctx, { toolCalls: [ledgerWrite(ctx, call, round, 'started')] });
  announceStart(ctx, call);
}

function announceStart(ctx: RunContext, call: ToolCall): void {
  ctx.state.startedCalls.add(call.id);
  emit(ctx, { type: 'tool_call_started', name: call.name, toolCallId: call.id, toolInput: parsedOrRaw(call), attempt: 1 });
}

class BatchStopped extends CancelledError {}

const BATCH_STOPPED = '[skipped: tool.after hook stopped the batch]';

/**
 * What closes a call that never finished, where the way the batch stopped ends the run's use of it
 * anyway (a break, a cancel that finishes the input); null where it does not (shutdown, lease loss,
 * a failure): such calls stay open, to be resolved by whoever continues the input.
 */
function closingContent(error: unknown): string | null {
  if (error instanceof BatchStopped) return BATCH_STOPPED;
  if (error instanceof CancelledError && isFinishingCancel(error)) return cancelledSkipContent(error.message);
  return null;
}

/**
 * Tool results reach the history in model order even when parallel calls finish out of order: each
 * outcome waits until every earlier call's result is committed. When the batch stops, the outcomes
 * still waiting (and those of calls that finish after the stop) are committed by
 * {@link ResultFlusher.flushFinished}.
 */
class ResultFlusher {
  readonly #outcomes = new Map<string, ToolOutcome>();
  #next = 0;
  #stopped = false;
  /** A result's commit failed: whether it was applied is unknown, so nothing after it is committed. */
  #failed = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly calls: ToolCall[],
    private readonly round: number,
  ) {}

  async finished(outcome: ToolOutcome): Promise<void> {
    this.#outcomes.set(outcome.toolCallId, outcome);
    // Once stopped, flushFinished records it with the other outcomes still held.
    if (this.#stopped) return;
    while (this.#next < this.calls.length) {
      const call = this.calls[this.#next]!;
      const ready = this.#outcomes.get(call.id);
      if (ready === undefined) return;
      this.#next += 1;
      let stop: boolean;
      try {
        stop = await this.#record(call, ready);
      } catch (error) {
        this.#failed = true;
        throw error;
      }
      if (stop) {
        this.#stopped = true;
        throw new BatchStopped('tool.after hook stopped the batch');
      }
    }
  }

  /**
   * After the batch stopped: commits, in model order, the outcomes not yet committed — calls that
   * finished while an earlier one still ran, or after the stop. An earlier call that never finished
   * is closed with `closing` first (the history keeps results in call order, I4); with `closing`
   * null, committing stops at the first such call. A `tool.after` hook still sees each result (it may
   * rewrite the output); a `break` it returns changes nothing now. After a result whose commit failed
   * nothing is committed: a later result would land ahead of it.
   */
  async flushFinished(closing: string | null): Promise<void> {
    this.#stopped = true;
    if (this.#failed) return;
    let unfinished: ToolCall[] = [];
    for (; this.#next < this.calls.length; this.#next += 1) {
      const call = this.calls[this.#next]!;
      const outcome = this.#outcomes.get(call.id);
      if (outcome === undefined) {
        if (closing === null) return;
        unfinished.push(call);
        continue;
      }
      if (closing !== null) await closeOpenCalls(this.ctx, unfinished, closing, this.round);
      unfinished = [];
      await this.#record(call, outcome);
    }
  }

  /** Commits one result; true when a tool.after hook asked to stop the batch. */
  async #record(call: ToolCall, outcome: ToolOutcome): Promise<boolean> {
    const { ctx, round } = this;
    const after = Object.assign(hookScope(ctx), { roundIndex: round, toolCall: call, output: outcome.content, failed: outcome.failed });
    const directive = ctx.deps.hooks.handles('tool.after') ? await ctx.deps.hooks.run('tool.after', after) : 'continue';
    const status = after.failed ? 'failed' : 'completed';
    const ledger = ledgerWrite(ctx, call, round, status, { args: outcome.args ?? undefined, errorCode: outcome.errorCode, durationMs: outcome.durationMs });
    // The images go with the result the tool returned, not with a failure a tool.after hook made of it.
    await commitResult(ctx, call, round, after.output, after.failed, ledger, after.failed ? [] : (outcome.images ?? []));
    // Rejected calls (unknown tool, invalid arguments) are not dispatches: no tool ran.
    if (outcome.errorCode !== 'tool.not_found' && outcome.errorCode !== 'tool.invalid_args') ctx.state.toolCalls += 1;
    if (after.failed) emit(ctx, { type: 'tool_call_failed', name: call.name, toolCallId: call.id, toolInput: outcome.args, output: after.output, errorCode: outcome.errorCode });
    emit(ctx, { type: 'tool_call_completed', name: call.name, toolCallId: call.id, toolInput: outcome.args, output: after.output, failed: after.failed, durationMs: outcome.durationMs });
    return directive === 'break';
  }
}

function parsedOrRaw(call: ToolCall): unknown {
  const parsed = parseToolArguments(call.arguments);
  return parsed.ok ? parsed.args : call.arguments;
}
