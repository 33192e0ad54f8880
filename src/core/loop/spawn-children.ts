import type { ChildPayload, ParsedInput } from '../input-payload.js';
import { parseInputPayload } from '../input-payload.js';
import type { ToolCall } from '../messages.js';
import { abortReason } from '../ports/clock.js';
import type { Usage } from '../session-types.js';
import { parseToolArguments, SPAWN_AGENT, type SpawnAgentArgs } from '../tools/index.js';
import { commitResult } from './commit-result.js';
import { emit } from './emit.js';
import { ledgerWrite } from './pending-results.js';
import { addCounts, addUsageCost, zeroUsage } from './recorded-progress.js';
import type { RunContext } from './run-context.js';

/**
 * Child sessions (docs/child-sessions.md): the `spawn_agent` calls of a round are run here, not by
 * the tool batch. A call with `wait: true` stays open until its child's result has been delivered
 * into the parent's inbox; until then the run parks (`waiting_for_children`) and holds no worker.
 * Every step is idempotent: a recovered or woken run calls `spawn` again for the same call, which
 * finds the child, and reads the results delivered so far.
 */

/** The round's `spawn_agent` calls the loop runs itself: when the agent offers the tool and the worker can start children. */
export function spawnCalls(ctx: RunContext, calls: readonly ToolCall[]): ToolCall[] {
  if (ctx.deps.children === undefined || !ctx.tools.has(SPAWN_AGENT)) return [];
  return calls.filter((call) => call.name === SPAWN_AGENT);
}

/**
 * What a `spawn_agent` call gets once it is its turn (results are committed in call order):
 * `answer`, known now — a refusal (bad arguments, an agent this one may not start, too deep, too
 * many children) or a `wait: false` call's child id; or `wait` for the child's delivered result.
 */
export type SpawnAnswer = { kind: 'answer'; content: string; failed: boolean; errorCode: string | null } | { kind: 'wait' };

/**
 * Starts (or finds) the child of each call, in model order, and commits nothing: every child runs
 * from now on, while the calls before it are answered. A fresh call has no child yet; a recovered or
 * woken run reads what was delivered first, and spawns again (finding the child) only for the calls
 * still without a result.
 */
export async function startChildren(ctx: RunContext, calls: readonly ToolCall[]): Promise<StartedChildren> {
  const delivered = ctx.params.resumed || ctx.params.woken === true ? await deliveredResults(ctx) : null;
  const answers = new Map<string, SpawnAnswer>();
  for (const call of calls) answers.set(call.id, delivered?.has(call.id) === true ? WAIT : await startChild(ctx, call));
  return { answers, delivered };
}

/** {@link startChildren}'s result: each call's answer, and the delivered results it read (null: none read). */
export interface StartedChildren {
  answers: ReadonlyMap<string, SpawnAnswer>;
  delivered: ReadonlyMap<string, ChildPayload> | null;
}

const WAIT: SpawnAnswer = Object.freeze({ kind: 'wait' });

async function startChild(ctx: RunContext, call: ToolCall): Promise<SpawnAnswer> {
  const args = checkedArguments(ctx, call);
  if (typeof args === 'string') return refused(args, 'tool.invalid_args');
  // An agent outside `subagents` is refused by the arguments' check: the tool's schema lists them.
  const refusal = spawnRefusal(ctx);
  if (refusal !== null) return refused(refusal, 'spawn.refused');
  const wait = args.wait ?? true;
  const outcome = await ctx.deps.children!.spawn({
    parentSessionId: ctx.params.sessionId,
    leaseToken: ctx.params.leaseToken,
    inputSeq: ctx.params.input.seq,
    toolCallId: call.id,
    agent: args.agent,
    task: args.task,
    wait,
    rootSessionId: ctx.session.rootSessionId,
    tenant: ctx.session.tenant,
    depth: ctx.session.depth + 1,
    maxChildrenPerInput: ctx.profile.maxChildrenPerInput,
  });
  ctx.state.spawned = true;
  if (outcome.kind === 'refused') return refused(`this input already started ${outcome.limit} sub-agents, the most one input may; answer with what you have`, 'spawn.refused');
  if (outcome.kind === 'created') emit(ctx, { type: 'subagent_started', childSessionId: outcome.childSessionId, agent: args.agent, toolCallId: call.id, wait });
  if (wait) return WAIT;
  const content = JSON.stringify({ childSessionId: outcome.childSessionId, status: 'started', note: 'the result will arrive as a <subagent_result> message' });
  return { kind: 'answer', content, failed: false, errorCode: null };
}

function refused(reason: string, errorCode: string): SpawnAnswer {
  return { kind: 'answer', content: `Error: ${reason}`, failed: true, errorCode };
}

/**
 * Answers one `spawn_agent` call, in its turn: commits what {@link startChildren} knew, or its
 * child's delivered result (`delivered` reads the results, once per phase). Returns false when the
 * child has not answered yet: the call, and every call after it, wait — results are committed in
 * call order only (a later result first would break the history's pairing, I4). A run whose cancel
 * finishes it does not wait: it throws, and the cancel closes the open calls.
 */
export async function answerSpawn(ctx: RunContext, call: ToolCall, answer: SpawnAnswer, round: number, delivered: () => Promise<ReadonlyMap<string, ChildPayload>>): Promise<boolean> {
  if (answer.kind === 'answer') {
    const ledger = ledgerWrite(ctx, call, round, answer.failed ? 'failed' : 'completed', { errorCode: answer.errorCode });
    await commitResult(ctx, call, round, answer.content, answer.failed, ledger);
    // A refusal started nothing: only a `wait: false` child's id counts as a call made.
    if (!answer.failed) ctx.state.toolCalls += 1;
    return true;
  }
  const result = (await delivered()).get(call.id);
  if (result === undefined) {
    if (ctx.params.signal.aborted) throw abortReason(ctx.params.signal);
    return false;
  }
  const failed = result.status === 'failed' || result.status === 'degraded' || result.status === 'cancelled';
  const ledger = ledgerWrite(ctx, call, round, failed ? 'failed' : 'completed', { errorCode: result.errorCode });
  await commitResult(ctx, call, round, result.text, failed, ledger);
  // Only a child that did not fail counts: a run woken after parking recounts the input's calls
  // from its history, where an error result does not count (recorded-progress.ts), so counting a
  // failed child here made `toolCalls` depend on whether its result came before or after the park.
  if (!failed) ctx.state.toolCalls += 1;
  ctx.state.spawned = true;
  emit(ctx, { type: 'subagent_finished', childSessionId: result.childSessionId, toolCallId: call.id, status: result.status, usage: result.usage });
  return true;
}

/**
 * The results delivered to this input, read once, on first use, for one pass over a round's calls:
 * `known` when it holds every call that waits (read just before), else read now.
 */
export function deliveredOnce(ctx: RunContext, started: StartedChildren): () => Promise<ReadonlyMap<string, ChildPayload>> {
  const { answers, delivered: known } = started;
  const waiting = [...answers].filter(([, answer]) => answer.kind === 'wait').map(([id]) => id);
  let read: Promise<ReadonlyMap<string, ChildPayload>> | null = known !== null && waiting.every((id) => known.has(id)) ? Promise.resolve(known) : null;
  return () => (read ??= deliveredResults(ctx));
}

/**
 * What the input's children spent, summed over the results delivered to it (each with its own
 * children); null when none was. Read at the finish of an input that may have children.
 */
export async function childrenUsage(ctx: RunContext): Promise<Usage | null> {
  if (!ctx.state.spawned && !ctx.params.resumed && ctx.params.woken !== true) return null;
  const delivered = ctx.state.childResults ?? (await deliveredResults(ctx));
  if (delivered.size === 0) return null;
  const total = zeroUsage();
  for (const { usage } of delivered.values()) {
    addCounts(total, usage);
    addUsageCost(total, usage);
    if (usage.children !== undefined) {
      addCounts(total, usage.children);
      addUsageCost(total, usage.children);
    }
  }
  return total;
}

/** `subagent_finished` for a `wait: false` child's result joining the conversation (any other input: nothing). */
export function announceChildResult(ctx: RunContext, parsed: ParsedInput): void {
  if (parsed.kind !== 'child') return;
  const { childSessionId, toolCallId, status, usage } = parsed.payload;
  emit(ctx, { type: 'subagent_finished', childSessionId, toolCallId, status, usage });
}

/** The child results delivered to this input, by tool call id: its `child` inbox rows, steered into it. */
async function deliveredResults(ctx: RunContext): Promise<Map<string, ChildPayload>> {
  const seq = ctx.params.input.seq;
  const later = await ctx.deps.store.listInputs(ctx.params.sessionId, { status: 'done', afterSeq: seq, limit: 1000 });
  const results = new Map<string, ChildPayload>();
  for (const input of later) {
    if (input.kind !== 'child' || input.steeredInto !== seq) continue;
    const parsed = parseInputPayload('child', input.payload);
    if (parsed.kind === 'child') results.set(parsed.payload.toolCallId, parsed.payload);
  }
  ctx.state.childResults = results;
  return results;
}

/** The call's arguments, or why they are not valid. */
function checkedArguments(ctx: RunContext, call: ToolCall): SpawnAgentArgs | string {
  const parsed = parseToolArguments(call.arguments);
  if (!parsed.ok) return parsed.reason;
  const check = ctx.tools.get(SPAWN_AGENT)!.checkArguments(parsed.args);
  return check.ok ? (parsed.args as unknown as SpawnAgentArgs) : check.message;
}

/** Why this session may not start that child, or null. */
function spawnRefusal(ctx: RunContext): string | null {
  const { maxSpawnDepth } = ctx.profile;
  const depth = ctx.session.depth + 1;
  if (depth > maxSpawnDepth) return `a sub-agent here would be at depth ${depth}, deeper than the ${maxSpawnDepth} allowed; do the task yourself`;
  return null;
}
