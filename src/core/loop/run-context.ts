import type { AgentProfile } from '../agent-profile.js';
import type { LoopEvent } from '../events/loop-events.js';
import type { HookRegistry, RunScope } from '../hooks/index.js';
import type { ParsedInput } from '../input-payload.js';
import type { StoredMessage } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import type { Clock } from '../ports/clock.js';
import type { EventSink } from '../ports/event-sink.js';
import type { Llm } from '../ports/llm.js';
import type { SessionStore } from '../ports/session-store.js';
import type { RetryPolicy } from '../retry/index.js';
import type { InputRecord, SessionRecord, ToolCallRecord, Usage } from '../session-types.js';
import type { ToolRegistry } from '../tools/index.js';
import type { StructuredValidator } from '../structured-output/index.js';
import type { StepMessageInput } from './step-input.js';

/** The ports and settings a run needs; built once per worker, shared by every run. */
export interface LoopDeps {
  store: SessionStore;
  llm: Llm;
  tools: ToolRegistry;
  hooks: HookRegistry;
  sink: EventSink;
  clock: Clock;
  profile: AgentProfile;
  retryPolicy: RetryPolicy;
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
 * The mutable state of one run, rebuilt from the store at start so that any worker can continue any
 * run. `window` mirrors the session's active messages and is kept current in memory as steps commit,
 * so a round costs no re-read of the history.
 */
export interface RunContext {
  deps: LoopDeps;
  params: RunParams;
  session: SessionRecord;
  parsed: ParsedInput;
  /** The agent profile with this input's overrides applied (a copy). */
  profile: AgentProfile;
  /** The tools the model may see and call in this run. */
  tools: ToolRegistry;
  /**
   * Calls whose start this run recorded: one closed without its result (a break, a cancel, a failed
   * run) may have taken effect, and its synthetic result says so instead of "skipped".
   */
  startedCalls: Set<string>;
  /** This input's tool allowlist (`options.tools`), recorded with the calls it asks for; null: every tool. */
  allowedTools: string[] | null;
  systemPrompt: string | null;
  window: StoredMessage[];
  pending: PendingState | null;
  /** Index of the next round to run. */
  round: number;
  /** Rounds allowed before the wrap-up call; `complete.decide` may extend it. */
  roundLimit: number;
  /** Usage summed over this input's LLM calls, including calls made before a takeover. */
  usage: Usage;
  /** Real tool dispatches of this input. */
  toolCalls: number;
  emptyStreak: number;
  truncationStreak: number;
  structuredRetries: number;
  completeDecideFires: number;
  /** Rounds before this index skip the budget check: a finalize window granted by `complete.decide`. */
  budgetGraceUntil: number;
  /** Seq of the last message written to the session (or deferred); the next append gets the one after. */
  lastMessageSeq: number;
  /**
   * Messages in `window` and announced, with the seqs the store will give them, that the run's next
   * step writes first (`deferMessages`): the input's own message.
   */
  deferred: { entry: StepMessageInput; seq: number }[];
  /** Ledger rows a previous holder left `started`: calls whose outcome is in doubt (I5). */
  inDoubt: Map<string, ToolCallRecord>;
  /** The response format's schema, compiled on first use. */
  structuredValidator?: StructuredValidator;
  /** Set when the input's payload (or its overrides) is invalid: the run fails it with this error. */
  payloadError?: Error;
  /** Rounds already recorded (usage rows) when this attempt started: resumed rounds are not re-counted. */
  roundsRecorded: number;
  /** Whether the session had pending inputs as of the last commit (or the claim). */
  pendingInputs: boolean;
  /** Whether one of them would change this run, as of the last commit (or the claim): steering looks only then. */
  pendingSteers: boolean;
  /** The error the input was finished with, once its terminal step committed. */
  finishedError?: { code: string; message: string } | null;
}

/** Which run a hook fires in, as every loop hook point's context carries it (a worker runs many sessions). */
export function hookScope(ctx: RunContext): RunScope {
  return { sessionId: ctx.params.sessionId, inputSeq: ctx.params.input.seq };
}

export function sessionIdOf(ctx: RunContext): string {
  return ctx.params.sessionId;
}

export function inputSeqOf(ctx: RunContext): number {
  return ctx.params.input.seq;
}
