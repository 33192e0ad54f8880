import type { AgentProfile } from '../agent-profile.js';
import type { LoopEvent } from '../events/loop-events.js';
import type { HookRegistry, RunScope } from '../hooks/index.js';
import type { ParsedInput } from '../input-payload.js';
import type { BudgetPort } from '../ports/budgets.js';
import type { ChildrenPort } from '../ports/children.js';
import type { Clock } from '../ports/clock.js';
import type { EventSink } from '../ports/event-sink.js';
import type { Llm } from '../ports/llm.js';
import type { LoopStore } from '../ports/loop-store.js';
import type { PriceTable } from '../pricing/index.js';
import type { Tracer } from '../ports/tracing.js';
import type { RetryPolicy } from '../retry/index.js';
import type { AgentRef, InputRecord, SessionRecord } from '../session-types.js';
import type { ToolRegistry } from '../tools/index.js';
import type { StructuredValidator } from '../structured-output/index.js';
import type { RunState } from './run-state.js';
import type { StoredState } from './stored-state.js';

/** The ports and settings a run needs; built once per worker, shared by every run. */
export interface LoopDeps {
  store: LoopStore;
  llm: Llm;
  tools: ToolRegistry;
  hooks: HookRegistry;
  sink: EventSink;
  clock: Clock;
  profile: AgentProfile;
  retryPolicy: RetryPolicy;
  /** The agent this run serves, recorded in the input's result; absent outside a fleet. */
  agent?: AgentRef;
  /** Starts child sessions for `spawn_agent` (docs/child-sessions.md); without it the tool is not run. */
  children?: ChildrenPort;
  /** Budget enforcement (docs/budgets.md): every model call reserves before and settles after; absent, no checks. */
  budgets?: BudgetPort;
  /**
   * Model prices (docs/prices.md): each call's cost is computed once, here, and stored with its usage.
   * Absent: costs are null (unpriced), and a money budget refuses every call.
   */
  prices?: PriceTable;
  /** Spans of inputs, rounds, model and tool calls (docs/tracing.md); absent: tracing off. */
  tracer?: Tracer;
  /** Called when the sink or a `session.end` hook throws; the run itself carries on. */
  onObserverError?: (error: unknown, event?: LoopEvent) => void;
  /** Randomness for retry jitter; injectable for tests. */
  random?: () => number;
}

/** One run: the input the drain claimed, under the lease it holds. */
export interface RunParams {
  sessionId: string;
  leaseToken: number;
  input: InputRecord;
  /** True when a previous holder died while running this input. */
  resumed: boolean;
  /** The input waited for child sessions and was claimed again: their results are in (or a cancel came). */
  woken?: boolean;
  /** The session as the claim left it; read from the store when absent. */
  session?: SessionRecord;
  /**
   * Whether other inputs were pending at the claim; absent means unknown. Kept current by every step
   * commit; the drain claims again only when it ends true.
   */
  pendingInputs?: boolean;
  /**
   * Whether one of them would change this run (`steer`, `interrupt`, a timer); absent means unknown
   * (the run then looks). Kept current by every step commit, so a run followed only by queued inputs
   * never queries for steering at a round start.
   */
  pendingSteers?: boolean;
  /**
   * Aborted to stop the run. The reason decides what happens: a `CancelledError` whose
   * `details.finish` is true (user cancel, interrupt) ends the input `cancelled`; any other reason
   * (shutdown, lease lost) stops without finishing it, so the next holder continues it.
   */
  signal: AbortSignal;
}

/**
 * One run. What is fixed for the run — the input, its profile and tools, the prompt — is set when the
 * run is loaded and never written after (`readonly`), so a phase may read it without asking who else
 * changes it, and a derived context (another tool set for recovered calls) is a shallow copy that
 * shares the rest. What changes lives in two objects of its own: {@link StoredState}, the mirror of
 * what the run committed, and {@link RunState}, its counters. Both are rebuilt from the store at
 * start, so that any worker can continue any run.
 */
export interface RunContext {
  readonly deps: LoopDeps;
  readonly params: RunParams;
  readonly session: SessionRecord;
  readonly parsed: ParsedInput;
  /** The agent profile with this input's overrides applied (a copy). */
  readonly profile: AgentProfile;
  /** The tools the model may see and call in this run. */
  readonly tools: ToolRegistry;
  /** This input's tool allowlist (`options.tools`), recorded with the calls it asks for; null: every tool. */
  readonly allowedTools: string[] | null;
  readonly systemPrompt: string | null;
  /** The response format's schema, compiled at load (absent without one, or when it does not compile). */
  readonly structuredValidator?: StructuredValidator;
  /** Set when the input's payload (or its overrides) is invalid: the run fails it with this error. */
  readonly payloadError?: Error;
  /** What the run's commits left in the store, mirrored; written by `commitStep` alone. */
  readonly stored: StoredState;
  /** The run's counters: round, limits, usage, retries, the ledger's started and in-doubt calls. */
  readonly state: RunState;
}

/** Which run a hook fires in, as every loop hook point's context carries it (a worker runs many sessions). */
export function hookScope(ctx: RunContext): RunScope {
  return { sessionId: ctx.params.sessionId, inputSeq: ctx.params.input.seq };
}
