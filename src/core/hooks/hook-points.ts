import type { Message, ToolCall } from '../messages.js';
import type { LlmRequest, LlmResponse } from '../ports/llm.js';
import type { TerminalStatus } from '../events/loop-events.js';

/**
 * What a hook tells the loop (docs/agent-loop.md). `continue` is the default; the first handler returning
 * anything else stops the chain. A directive a point does not honour is treated as `continue`.
 */
export type HookDirective = 'continue' | 'skip' | 'break' | 'short_circuit';

/**
 * Which run a loop hook fires in: every loop point's context carries the session and the input being
 * run (one worker runs many sessions, so a hook cannot tell them apart otherwise).
 */
export interface RunScope {
  sessionId: string;
  inputSeq: number;
}

/** The typed context of each hook point. Fields documented as mutable may be changed by handlers. */
export interface HookContexts {
  /** Before the first round of a run. */
  'session.start': { sessionId: string; inputSeq: number; resumed: boolean };
  /** Exactly once per run, after the terminal status is decided. Read-only. */
  'session.end': { sessionId: string; inputSeq: number; status: TerminalStatus; reason: string; finalText: string };
  /** After steering is drained. `break` → completed (reason = `reason` or `hook_break`); `skip` → skip this round. */
  'round.start': RunScope & { roundIndex: number; steeredInputs: number; reason: string | null };
  /** End of every round. Read-only. */
  'round.end': RunScope & { roundIndex: number; hasTools: boolean; responseText: string };
  /**
   * Before the LLM call. `request` is a per-call copy (mutable, never persisted); `persistMessages`
   * are appended durably and sent. `short_circuit` uses `output` instead of calling the model;
   * `break` → completed.
   */
  'llm.before': RunScope & { roundIndex: number; request: LlmRequest; output: LlmResponse | null; persistMessages: Message[] };
  /** After the LLM call. `response` may be replaced; `break` persists the text and completes. */
  'llm.after': RunScope & { roundIndex: number; response: LlmResponse };
  /** Tool calls present. `skip` → every call gets `output` as its result; `break` → completed. */
  'round.decide': RunScope & { roundIndex: number; toolCalls: ToolCall[]; assistantText: string; output: string };
  /** Before a batch of tool calls. `skip` → every call gets `output`. */
  'tools.batch.before': RunScope & { roundIndex: number; toolCalls: ToolCall[]; output: string };
  /** After a batch. Read-only. */
  'tools.batch.after': RunScope & { roundIndex: number; toolCalls: ToolCall[] };
  /** Before one call. `toolArgs` may be rewritten; `skip` → the result is `output`, the tool does not run. */
  'tool.before': RunScope & { roundIndex: number; toolCall: ToolCall; toolArgs: Record<string, unknown> | null; output: string };
  /** After one call. `output`/`failed` may be replaced; `break` stops the remaining calls of the batch. */
  'tool.after': RunScope & { roundIndex: number; toolCall: ToolCall; output: string; failed: boolean };
  /** Before compaction. `skip` → no compaction this round. */
  'compact.before': RunScope & { roundIndex: number; estimatedTokens: number };
  /** After compaction. Read-only. */
  'compact.after': RunScope & { roundIndex: number; foldedMessages: number; beforeTokens: number; afterTokens: number };
  /** Before every appended message; `message` may be mutated (persisted and sent as mutated). */
  'message.append': RunScope & { message: Message };
  /**
   * At a terminal boundary (completed, hit_round_limit, budget_exceeded). `short_circuit` with a
   * non-empty `inject` appends it as a user message and grants `extraRounds` (≥ 1) more rounds.
   */
  'complete.decide': RunScope & { reason: 'completed' | 'hit_round_limit' | 'budget_exceeded'; finalText: string; fireCount: number; inject: string | null; extraRounds: number };
  /**
   * A timer's firing, in the worker whose alarm came due, before anything of it is delivered
   * (docs/fleet.md, "Timers"; power-loop's `TIMER_FIRE`). `fireCount` is this firing's number (1 for the
   * first); `note` is what it delivers (mutable: 1 to 10,000 characters, not blank; the timer keeps its
   * own). `continue` delivers it; `skip` drops it (a one-shot ends `fired`, a recurring timer is
   * re-armed for its next period); `break` cancels the timer; with `continue`, `postponeMs` (an
   * integer up to 366 days) above 0 moves this firing that long from now, when the hook runs again.
   * It also runs again when an alarm is repeated before the firing was delivered (a crashed worker);
   * once the firing's input is accepted it does not. A hook that throws leaves the timer armed and the
   * alarm is retried (`timer_fired` with `outcome: 'error'`), as does one that takes over 30 s.
   * `signal` is aborted at that deadline or when the worker must stop now (a forced shutdown): a hook
   * that calls out passes it on.
   */
  'timer.fire': {
    sessionId: string;
    timerId: string;
    note: string;
    dueAt: Date;
    fireCount: number;
    everyMs: number | null;
    createdBy: 'host' | 'agent';
    postponeMs: number;
    signal: AbortSignal;
  };
}

export type HookPoint = keyof HookContexts;

/** The agent loop's hook points, in no particular order; `timer.fire` runs in the worker, outside any run. */
export const HOOK_POINTS = [
  'session.start',
  'session.end',
  'round.start',
  'round.end',
  'llm.before',
  'llm.after',
  'round.decide',
  'tools.batch.before',
  'tools.batch.after',
  'tool.before',
  'tool.after',
  'compact.before',
  'compact.after',
  'message.append',
  'complete.decide',
] as const satisfies readonly HookPoint[];

/** The hook points a worker runs outside the loop. */
export const WORKER_HOOK_POINTS = ['timer.fire'] as const satisfies readonly HookPoint[];

/** A handler may return a directive or set `ctx.directive`. */
export type HookContext<P extends HookPoint> = HookContexts[P] & { directive?: HookDirective };

export type HookHandler<P extends HookPoint> = (
  ctx: HookContext<P>,
) => HookDirective | void | Promise<HookDirective | void>;

/** One hook of the `LOOPFLEET_HOOKS` module: a handler for `point`, with the registry's options. */
export type HookDefinition = { [P in HookPoint]: { point: P; handler: HookHandler<P>; name?: string; order?: number } }[HookPoint];

/**
 * Identity helper for typed authoring: `defineHook({ point: 'timer.fire', handler: (fire) => … })`
 * types the handler's context by its point. It checks nothing at runtime — the worker validates the
 * module's hooks when it loads them.
 */
export function defineHook<P extends HookPoint>(definition: { point: P; handler: HookHandler<P>; name?: string; order?: number }): HookDefinition {
  return definition as unknown as HookDefinition;
}
