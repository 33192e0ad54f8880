/**
 * The records a {@link SessionStore} hands to the loop: sessions, inbox inputs, tool-ledger rows and
 * usage rows, in core types only (no database types). See `messages.ts` for the glossary.
 */
import type { PendingState } from './pending-state.js';
import type { BudgetRefusal } from './ports/budgets.js';
import type { TraceContext } from './ports/tracing.js';

/** What the session is doing, kept on the session row for cheap listing. */
export type SessionStatus = 'idle' | 'running' | 'waiting_for_input' | 'waiting_for_children';

export const SESSION_STATUSES = ['idle', 'running', 'waiting_for_input', 'waiting_for_children'] as const satisfies readonly SessionStatus[];

/**
 * `send`: a user turn. `resume`: continue after a crash or a pending tool. `timer`: a timer fired.
 * `child`: a child session's outcome delivered to its parent (docs/child-sessions.md).
 */
export type InputKind = 'send' | 'resume' | 'timer' | 'child';

/** How an input that arrives mid-run is applied (docs/fleet.md). */
export type InputMode = 'queue' | 'steer' | 'interrupt';

/**
 * Lifecycle of an inbox row: `pending → running → done | failed | cancelled`. A run that waits for
 * child sessions parks its input `waiting` (not terminal) until their results are in, then it is
 * `running` again.
 */
export type InputStatus = 'pending' | 'running' | 'waiting' | 'done' | 'failed' | 'cancelled';

/** The statuses an input can end in. */
export type TerminalInputStatus = 'done' | 'failed' | 'cancelled';

/** Every {@link InputKind}, for validation. */
export const INPUT_KINDS = ['send', 'resume', 'timer', 'child'] as const satisfies readonly InputKind[];
/** Every {@link InputMode}, for validation. */
export const INPUT_MODES = ['queue', 'steer', 'interrupt'] as const satisfies readonly InputMode[];
/** Every {@link InputStatus}, for validation. */
export const INPUT_STATUSES = ['pending', 'running', 'waiting', 'done', 'failed', 'cancelled'] as const satisfies readonly InputStatus[];
/** Every {@link TerminalInputStatus}, for validation. */
export const TERMINAL_INPUT_STATUSES = ['done', 'failed', 'cancelled'] as const satisfies readonly TerminalInputStatus[];

/** The outcome of one run as the loop reports it (I6). */
export type RunOutcome =
  | 'completed'
  | 'waiting_for_input'
  | 'waiting_for_children'
  | 'cancelled'
  | 'hit_round_limit'
  | 'budget_exceeded'
  | 'degraded'
  | 'failed';

/** Every {@link RunOutcome}, for validation. */
export const RUN_OUTCOMES = [
  'completed',
  'waiting_for_input',
  'waiting_for_children',
  'cancelled',
  'hit_round_limit',
  'budget_exceeded',
  'degraded',
  'failed',
] as const satisfies readonly RunOutcome[];

/** Token usage summed over some LLM calls (one round, one input, or a whole session). */
export interface Usage {
  promptTokens: number;
  /** Output tokens, reasoning included. */
  completionTokens: number;
  /** Cache read: prompt tokens served from the provider's prompt cache (a subset of `promptTokens`). */
  cachedTokens: number;
  /**
   * Cache write: prompt tokens written to the provider's prompt cache (a subset of `promptTokens`;
   * Anthropic's `cache_creation_input_tokens`, 0 for OpenAI). 0 in results stored before it existed.
   */
  cacheWriteTokens: number;
  /** Reasoning tokens (a subset of `completionTokens`). */
  reasoningTokens: number;
  totalTokens: number;
  /** LLM requests made, retries included. */
  llmCalls: number;
  /**
   * What these calls cost, in USD, at the worker's prices (docs/prices.md): for display and JSON.
   * 0 when none had a price. Sums use `costPicoUsd`, which is exact.
   */
  costUsd: number;
  /** The same cost as an integer of picodollars (10^-12 USD): exact, what stats and reports add up. */
  costPicoUsd: number;
  /** Calls whose model had no price: their cost is in neither field. Absent when every call had one. */
  unpricedCalls?: number;
  /**
   * On an input's result only: what the child sessions it spawned spent, summed over the results
   * delivered to it (each child's own `children` included). The fields above are this input's own.
   */
  children?: Usage;
}

/** What an input's run produced, stored on the inbox row when it finishes. */
export interface InputResult {
  status: RunOutcome;
  /** Text of the last assistant message ('' when there was none). */
  finalText: string;
  rounds: number;
  /** Real, validated tool dispatches during this run. */
  toolCalls: number;
  /** Usage of this run only, not cumulative. */
  usage: Usage;
  /** Parsed structured output, when the input asked for a response format. */
  output?: unknown;
  /**
   * Set only on the result of a steered input (I6): the seq of the running input it
   * was delivered into. Its result is that run's result, copied when the run finished.
   */
  steeredInto?: number;
  /**
   * The agent that ran the input and the version of its definition (docs/agents.md). Absent on
   * results written before agents existed.
   */
  agent?: AgentRef;
  /**
   * Set when a budget refused the input's next model call (`budget_exceeded`, docs/budgets.md):
   * which budget, its limit and use, and why — the error's details.
   */
  budget?: BudgetRefusal;
}

/** An agent as one run saw it: its name and the version (hash) of its definition. */
export interface AgentRef {
  name: string;
  version: string;
}

/** The session's lease: who may run its inputs, and the fencing token every write must carry. */
export interface LeaseState {
  owner: string | null;
  /**
   * Changed on every acquisition and never reused for the session id, even after the session is
   * deleted and created again: each acquisition's token is greater than every token issued before it
   * (tokens are not consecutive). 0 before the first one.
   */
  token: number;
  /** Database time at which the lease lapses; null when released or never taken. */
  expiresAt: Date | null;
}

/** Cumulative counters over every finished input of a session. */
export interface SessionStats {
  inputs: number;
  rounds: number;
  llmCalls: number;
  toolCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** Cache read (see {@link Usage}). */
  cachedTokens: number;
  /** Cache write (see {@link Usage}). */
  cacheWriteTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  /** What the finished inputs' own calls cost, in USD (display; `costPicoUsd` is exact). */
  costUsd: number;
  /** The same cost in picodollars (10^-12 USD), an exact integer. */
  costPicoUsd: number;
  /** When the first input finished. */
  firstInputAt: Date | null;
  /** When the latest input finished. */
  lastInputAt: Date | null;
}

/** A session as stored: identity, profile, allocators, lease, pending state and stats. */
export interface SessionRecord {
  id: string;
  /** Agent profile name. */
  agent: string;
  /** Whose session it is: `default` unless created with one; never changes. Children take their parent's. */
  tenant: string;
  systemPrompt: string | null;
  metadata: Record<string, unknown>;
  config: Record<string, unknown>;
  status: SessionStatus;
  /** Last input seq handed out (0 before the first input). */
  nextSeq: number;
  /** Last message seq written (0 before the first message). */
  nextMessageSeq: number;
  lease: LeaseState;
  pending: PendingState | null;
  /** Set by a cancel request, cleared by the lease holder once acted on. */
  cancelRequestedAt: Date | null;
  /**
   * Set on a child session when its parent's tree was cancelled: every input accepted up to then
   * ends `cancelled` as soon as it runs (docs/child-sessions.md). Null otherwise.
   */
  cascadeCancelledAt: Date | null;
  /** The session that spawned this one, or null for a session a producer created. */
  parentSessionId: string | null;
  /** The top of its tree: its own id for a session that is not a child. */
  rootSessionId: string;
  /** 0 for a root session, its parent's depth + 1 for a child. */
  depth: number;
  /** For a child: which call of which parent input spawned it, and whether that call waits. */
  spawn: ChildSpawn | null;
  stats: SessionStats;
  createdAt: Date;
  updatedAt: Date;
}

/** How a child session came to be: the parent input and tool call that spawned it. */
export interface ChildSpawn {
  inputSeq: number;
  toolCallId: string;
  /** True when the call waits for the child's result; false when the result arrives later as a steered input. */
  wait: boolean;
}

/** One inbox row. */
export interface InputRecord {
  sessionId: string;
  /** Per-session, gapless, in acceptance (commit) order, starting at 1. */
  seq: number;
  /** Idempotency key, unique per session. */
  inputId: string;
  kind: InputKind;
  mode: InputMode;
  payload: Record<string, unknown>;
  status: InputStatus;
  /** How many times a worker has started running it. */
  attempts: number;
  /**
   * A steered input's host: the seq of the running input it was delivered into.
   * Null for every other input. A steered input is `done` from delivery on; its `result`, error code
   * and message stay null until the host finishes, then they are the host's (the result with
   * `steeredInto` added).
   */
  steeredInto: number | null;
  result: InputResult | null;
  /** A `waiting` input: the ids of the `spawn_agent` calls whose child results it waits for. Null otherwise. */
  awaiting: string[] | null;
  errorCode: string | null;
  errorMessage: string | null;
  /** The BullMQ job that delivered it, when it came through the raw path. */
  originJobId: string | null;
  /** The producer's span (W3C trace context) the input's span continues (docs/tracing.md); null or absent when none came. */
  traceContext?: TraceContext | null;
  acceptedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** Tool-ledger status (I5). `started` found after a takeover means the outcome is unknown. */
export type ToolCallStatus = 'started' | 'completed' | 'failed' | 'in_doubt' | 'aborted';

/** Every {@link ToolCallStatus}, for validation. */
export const TOOL_CALL_STATUSES = [
  'started',
  'completed',
  'failed',
  'in_doubt',
  'aborted',
] as const satisfies readonly ToolCallStatus[];

/** One tool-ledger row. */
export interface ToolCallRecord {
  sessionId: string;
  toolCallId: string;
  inputSeq: number;
  round: number;
  name: string;
  args: unknown;
  status: ToolCallStatus;
  /** Times the call was started; above 1 means it was re-run after a crash. */
  attempts: number;
  /** `<sessionId>:<toolCallId>`, handed to the tool so its side effects can be deduplicated. */
  idempotencyKey: string;
  errorCode: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  durationMs: number | null;
}

/** The token and call counts of a {@link Usage}, without its cost. */
export type UsageCounts = Omit<Usage, 'costUsd' | 'costPicoUsd' | 'unpricedCalls' | 'children'>;

/** Usage of one round of one input. */
export interface UsageRoundRecord extends UsageCounts {
  /** What the round's call cost in picodollars; null when its model had no price (or before prices existed). */
  costPicoUsd: number | null;
  sessionId: string;
  inputSeq: number;
  round: number;
  provider: string;
  model: string;
  createdAt: Date;
}
