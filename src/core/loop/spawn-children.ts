import type { ChildPayload, ParsedInput } from '../input-payload.js';
import { parseInputPayload } from '../input-payload.js';
import type { ToolCall } from '../messages.js';
import { abortReason } from '../ports/clock.js';
import type { Usage } from '../session-types.js';
import { parseToolArguments, SPAWN_AGENT, type SpawnAgentArgs } from '../tools/index.js';
import { commitResult } from './commit-result.js';
import { emit } from './emit.js';
import { ledgerWrite } from './pending-results.js';
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
 * Starts (or finds) the child of each call, in model order. A call refused (bad arguments, an agent
 * this one may not start, too deep, too many children) gets an error result the model sees; a
 * `wait: false` call gets the child's id at once. Returns the calls that wait for their child.
 */
export async function startChildren(ctx: RunContext, calls: readonly ToolCall[], round: number): Promise<StartedChildren> {
  // A fresh call has no child yet; a recovered or woken run reads what was delivered first, and
  // spawns again (finding the child) only for the calls still without a result.
  const delivered = ctx.params.resumed || ctx.params.woken === true ? await deliveredResults(ctx) : new Map<string, ChildPayload>();
  const awaiting: ToolCall[] = [];
  for (const call of calls) {
    if (delivered.has(call.id)) {
      awaiting.push(call);
      continue;
    }
    const args = checkedArguments(ctx, call);
    if (typeof args === 'string') {
      await commitResult(ctx, call, round, `Error: ${args}`, true, ledgerWrite(ctx, call, round, 'failed', { errorCode: 'tool.invalid_args' }));
      continue;
    }
    const refusal = spawnRefusal(ctx, args);
    if (refusal !== null) {
      await commitResult(ctx, call, round, `Error: ${refusal}`, true, ledgerWrite(ctx, call, round, 'failed', { errorCode: 'spawn.refused' }));
      continue;
    }
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
      depth: ctx.session.depth + 1,
      maxChildrenPerInput: ctx.profile.maxChildrenPerInput,
    });
    ctx.state.spawned = true;
    if (outcome.kind === 'refused') {
      const text = `Error: this input already started ${outcome.limit} sub-agents, the most one input may; answer with what you have`;
      await commitResult(ctx, call, round, text, true, ledgerWrite(ctx, call, round, 'failed', { errorCode: 'spawn.refused' }));
      continue;
    }
    if (outcome.kind === 'created') emit(ctx, { type: 'subagent_started', childSessionId: outcome.childSessionId, agent: args.agent, toolCallId: call.id, wait });
    if (wait) {
      awaiting.push(call);
      continue;
    }
    const started = JSON.stringify({ childSessionId: outcome.childSessionId, status: 'started', note: 'the result will arrive as a <subagent_result> message' });
    await commitResult(ctx, call, round, started, false, ledgerWrite(ctx, call, round, 'completed'));
    ctx.state.toolCalls += 1;
  }
  return { awaiting, delivered };
}

/** {@link startChildren}'s result: the calls that wait, and the results it already read. */
export interface StartedChildren {
  awaiting: ToolCall[];
  delivered: ReadonlyMap<string, ChildPayload>;
}

/**
 * Answers each waiting call whose child's result has been delivered, in model order (read again
 * unless `started` already holds every one). Returns the
 * calls still waiting. A run whose cancel finishes it does not wait: it throws, and the cancel
 * closes the open calls.
 */
export async function collectChildResults(ctx: RunContext, started: StartedChildren, round: number): Promise<ToolCall[]> {
  const { awaiting } = started;
  if (awaiting.length === 0) return [];
  const delivered = awaiting.every((call) => started.delivered.has(call.id)) ? started.delivered : await deliveredResults(ctx);
  const waiting: ToolCall[] = [];
  for (const call of awaiting) {
    const result = delivered.get(call.id);
    if (result === undefined) {
      waiting.push(call);
      continue;
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
  }
  if (waiting.length > 0 && ctx.params.signal.aborted) throw abortReason(ctx.params.signal);
  return waiting;
}

/**
 * What the input's children spent, summed over the results delivered to it (each with its own
 * children); null when none was. Read at the finish of an input that may have children.
 */
export async function childrenUsage(ctx: RunContext): Promise<Usage | null> {
  if (!ctx.state.spawned && !ctx.params.resumed && ctx.params.woken !== true) return null;
  const delivered = await deliveredResults(ctx);
  if (delivered.size === 0) return null;
  const total: Usage = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, totalTokens: 0, llmCalls: 0 };
  for (const { usage } of delivered.values()) {
    for (const part of [usage, usage.children]) {
      if (part === undefined) continue;
      total.promptTokens += part.promptTokens;
      total.completionTokens += part.completionTokens;
      total.cachedTokens += part.cachedTokens;
      total.cacheWriteTokens += part.cacheWriteTokens;
      total.reasoningTokens += part.reasoningTokens;
      total.totalTokens += part.totalTokens;
      total.llmCalls += part.llmCalls;
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
function spawnRefusal(ctx: RunContext, args: SpawnAgentArgs): string | null {
  const { subagents, maxSpawnDepth } = ctx.profile;
  if (!subagents.includes(args.agent)) return `"${args.agent}" is not an agent you may start; you may start: ${subagents.join(', ')}`;
  const depth = ctx.session.depth + 1;
  if (depth > maxSpawnDepth) return `a sub-agent here would be at depth ${depth}, deeper than the ${maxSpawnDepth} allowed; do the task yourself`;
  return null;
}
