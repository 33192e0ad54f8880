/**
 * The records and parameters of the store ports (`LoopStore`, `FleetStore`, `ClientStore`), in core
 * types only.
 *
 * Every state-changing operation of a run is fenced: it carries the lease token the caller got from
 * `acquireLease`, and when the session's current token differs it throws
 * `lease.lost` having changed nothing (I3).
 */
import type { Message, MessageKind, StoredMessage } from '../messages.js';
import type { PendingState } from '../pending-state.js';
import type { TraceContext } from './tracing.js';
import type {
  InputKind,
  InputMode,
  InputRecord,
  InputResult,
  InputStatus,
  SessionRecord,
  TerminalInputStatus,
  ToolCallRecord,
  ToolCallStatus,
  UsageCounts,
  UsageRoundRecord,
} from '../session-types.js';

/** What `createSession` needs; everything but the id has a default. */
export interface CreateSessionParams {
  /** 1–128 characters of `[A-Za-z0-9_.:-]`; a new session's not ending in `:seq` or `:finished`. */
  id: string;
  /**
   * The agent the session runs on, for good: 1–64 characters of `[A-Za-z0-9_.-]`. Default `default`
   * (the fleet's default agent, always accepted); another name is refused with `agent.not_found`
   * unless a live worker registered it (docs/client.md).
   */
  agent?: string;
  /** Whose session it is, for good: 1–128 characters of `[A-Za-z0-9_.:-]`. Default `default`. */
  tenant?: string;
  /**
   * The queue (`LOOPFLEET_QUEUE`) the session runs on, for good. Absent: the queue of its first add.
   * Adds on another queue are refused with `session.queue_mismatch`.
   */
  queue?: string;
  /** The system prompt every run of the session starts from. */
  systemPrompt?: string | null;
  /** Stored and returned as given. */
  metadata?: Record<string, unknown>;
  /** Stored and returned as given; workers do not apply it yet (they run their own profile). */
  config?: Record<string, unknown>;
}

/** An input to make durable (docs/fleet.md, "The inbox"). */
export interface AcceptInputParams {
  /** Created (with defaults) when it does not exist yet. */
  sessionId: string;
  /**
   * Idempotency key: 1–200 characters of `[A-Za-z0-9_.:@/-]`. A repeated key returns the original
   * seq instead of accepting again. Default: a random UUID.
   */
  inputId?: string;
  kind: InputKind;
  /** Default `queue`. */
  mode?: InputMode;
  /** A JSON object. */
  payload: Record<string, unknown>;
  /** The BullMQ job that delivered the input, for tracing. */
  originJobId?: string;
  /**
   * The producer's span (W3C trace context) the input's span continues in the worker
   * (docs/tracing.md). A malformed one is dropped, never refused: tracing is best effort.
   */
  traceContext?: TraceContext | null;
  /**
   * The agent the input is for. A session it creates runs on it. Refused, with nothing written, with
   * `agent.not_found` when no live worker registered it (`default` always passes) and with
   * `session.agent_mismatch` when the session runs on another agent. Absent: any session takes it.
   */
  agent?: string;
  /**
   * The tenant the input is for (1–128 of `[A-Za-z0-9_.:-]`). A session it creates belongs to it
   * (else to `default`). Refused, with nothing written, with `session.tenant_mismatch` when the
   * session belongs to another tenant. Absent: any session takes it.
   */
  tenant?: string;
  /**
   * The queue (`LOOPFLEET_QUEUE`) the input is added on. A session it creates runs on it (a session
   * from before queues were recorded takes it). Refused, with nothing written, with
   * `session.queue_mismatch` when the session runs on another queue. Absent: any session takes it.
   */
  queue?: string;
  /** Largest accepted payload, in bytes of its UTF-8 JSON text. */
  maxBytes: number;
}

/** Where an accepted input landed in the session's inbox. */
export interface AcceptedInput {
  sessionId: string;
  seq: number;
  inputId: string;
  /** True when the input id had been accepted before; `seq` is then the original one. */
  duplicate: boolean;
  /** The session's tenant (the kick's fair-dispatch line, docs/fair-dispatch.md). */
  tenant: string;
}

export type { AcquireLeaseParams, ClaimedInput, LeaseAcquisition, LeaseAndClaim, ReleaseLeaseParams, RenewLeaseParams, TenantAtCap } from './lease-records.js';

/** The session and the lease token a fenced write is made under. */
export interface FencedParams {
  sessionId: string;
  leaseToken: number;
}

/** What a run is rebuilt from besides the session and the input: `loadRunState`. */
export interface RunState {
  /** The active messages, in seq order (as `loadWindow`). */
  window: StoredMessage[];
  /** Usage rows of the input, by round (as `getUsageRounds` with its seq). */
  usageRounds: UsageRoundRecord[];
  /** Ledger rows still `started` or `in_doubt` (as `loadOpenToolCalls`). */
  openToolCalls: ToolCallRecord[];
}

/** A message to append; its seq is allocated by the store. */
export interface StepMessage {
  inputSeq: number | null;
  round: number | null;
  /** Default `message`. */
  kind?: MessageKind;
  message: Message;
}

/** An upsert of one tool-ledger row, keyed by tool call id. */
export interface ToolCallWrite {
  toolCallId: string;
  inputSeq: number;
  round: number;
  name: string;
  args: unknown;
  /** `started` on an existing row counts another attempt. */
  status: ToolCallStatus;
  errorCode?: string | null;
  durationMs?: number | null;
}

/**
 * Usage of one round; writing the same (inputSeq, round) again replaces the row. The store copies the
 * session's tenant and agent onto it (usage reports read the row alone).
 */
export interface UsageRoundWrite extends UsageCounts {
  /** What the round's call cost, in picodollars (10^-12 USD); null or absent: its model has no price. */
  costPicoUsd?: number | null;
  inputSeq: number;
  round: number;
  provider: string;
  model: string;
}

/** A fold of old messages into a compact note (docs/agent-loop.md, "Compaction"). */
export interface CompactionWrite {
  /** Seqs of the active messages folded away; each must be active, or the step is refused. */
  foldSeqs: number[];
  record: {
    /**
     * Seq of the compact note. Default: the first message of this step whose kind is
     * `compact_note`.
     */
    noteSeq?: number;
    inputSeq?: number | null;
    fromSeq: number;
    toSeq: number;
    estimatedTokensBefore: number;
    estimatedTokensAfter: number;
    model: string | null;
  };
}

/**
 * Steering: pending inputs whose content this step delivers into the running input,
 * at a round boundary. They become `done` with `steeredInto` naming the run they joined, and no result
 * yet; when that run finishes ({@link InputTransition}) they get its result (with `steeredInto` added)
 * and its error code and message, in the same transaction (I6). Committed with the messages that
 * carry them, so each is delivered exactly once; claims never pick them.
 */
export interface SteerDelivery {
  /** Seqs of the delivered inputs; each must still be `pending`, or the step is refused. */
  seqs: number[];
  /** The running input they join. */
  intoInputSeq: number;
}

/**
 * Ends a running input. The inputs steered into it end with it: they stay `done` and get `result`
 * (plus `steeredInto`), `errorCode`, `errorMessage` and the finish time; only this input counts in
 * the session's stats.
 */
export interface InputTransition {
  seq: number;
  status: TerminalInputStatus;
  result?: InputResult;
  errorCode?: string;
  errorMessage?: string;
}

/**
 * Everything one step of a run writes, applied in one fenced transaction: all of it or none of it.
 * Fields left out are not touched.
 */
export interface StepCommit extends FencedParams {
  /** Appended in order, with gapless per-session seqs. */
  messages?: StepMessage[];
  /** `undefined`: unchanged; `null`: cleared; an object: replaces it. */
  pending?: PendingState | null;
  /** Ledger upserts; at most one per tool call id in a step. */
  toolCalls?: ToolCallWrite[];
  /** At most one per (inputSeq, round) in a step. */
  usageRounds?: UsageRoundWrite[];
  compaction?: CompactionWrite;
  /** Pending inputs delivered into the running one by this step. */
  steer?: SteerDelivery;
  /**
   * Finishes the running input and adds its result to the session's cumulative stats. Refused with
   * `state.conflict` (and the whole step rolled back) unless the input is `running`.
   */
  input?: InputTransition;
}

/** What a committed step was given. */
export interface StepCommitResult {
  /** Seqs given to `messages`, in order. */
  messageSeqs: number[];
  /**
   * True when the session had `pending` inputs (accepted, neither started nor steered) as the step
   * committed — inputs accepted concurrently may be missed, never invented. The drain claims again
   * only then, so an input without followers costs no extra reads.
   */
  pendingInputs: boolean;
  /**
   * True when one of those inputs would change the running one — mode `steer` or `interrupt`, or a
   * timer — or may (an input accepted while the step committed, whose mode it did not read). The run
   * looks for steering at a round start only then, so a backlog of queued inputs costs no reads.
   * Implies `pendingInputs`.
   */
  pendingSteers: boolean;
}

/** Filters and paging of `listInputs`. */
export interface ListInputsOptions {
  status?: InputStatus | InputStatus[];
  /** Only inputs with a greater seq (paging). */
  afterSeq?: number;
  /** Default 100, at most 1000. */
  limit?: number;
  /**
   * Only inputs that change a running input when they arrive: mode `steer` or `interrupt`, or kind
   * `timer` (the steering check reads these past any backlog of queued inputs). Default false.
   */
  affectsRun?: boolean;
}

/** What `loadHistory` includes, and which page of it. */
export interface LoadHistoryOptions {
  /** Include messages folded away by compaction. Default false. */
  includeCompacted?: boolean;
  /** Only messages with a greater message seq (paging): a non-negative safe integer. Default 0, from the first. */
  afterSeq?: number;
  /**
   * At most this many messages, an integer from 1 to 10,000 (`MAX_HISTORY_PAGE`). Default: no limit —
   * every message after `afterSeq`, for compatibility; readers of long sessions should page.
   */
  limit?: number;
}

/** `countInputs`: how many of a session's inputs are in each status (every status present, 0 when none). */
export type InputStatusCounts = Record<InputStatus, number>;

/** `deleteSession`: what the deleted session left for the fence of its stream. */
export interface DeletedSession {
  /** The session's last lease token; every holder it ever had wrote under this token or an older one. */
  leaseToken: number;
  /** Its descendants (child sessions, theirs …), deleted with it, each with its last lease token. */
  descendants: { sessionId: string; leaseToken: number }[];
}

/** `parkInput`: the running input waits for the child results of `awaiting` (tool call ids). */
export interface ParkInputParams extends FencedParams {
  inputSeq: number;
  awaiting: string[];
}

/** `spawnChild`: the store side of `ChildrenPort.spawn`. */
export type { ListSessionsOptions, SessionPage, SessionSummary } from './session-list.js';
export type { SpawnRequest as SpawnChildParams, SpawnOutcome as SpawnChildResult } from './children.js';

/**
 * `deliverChildResult`: a child input ended; its outcome goes to the parent's inbox once (input id
 * `child:<toolCallId>`). Null when the session is not a child, or its result was already delivered
 * or is no longer wanted (the parent input it answers has ended).
 */
export interface ChildDelivery {
  parentSessionId: string;
  /** The parent's new inbox seq. */
  seq: number;
}

/** One child of a session, as `sessions.children(id)` lists them (spawn order). */
export interface ChildSessionRecord {
  sessionId: string;
  agent: string;
  /** The parent input and call that spawned it. */
  inputSeq: number;
  toolCallId: string;
  wait: boolean;
  depth: number;
  /**
   * The child's state: its first input's terminal status once it has one (`completed`, `failed` …,
   * from the input's result), else `waiting_for_input`, `running` or `pending`.
   */
  status: string;
  createdAt: Date;
}

/** `requestCancel` with its tree: the sessions below it whose inputs were cancelled with it. */
export interface CancelledTree {
  requestedAt: Date;
  descendants: string[];
  /** The session's tenant, which its descendants share (their kicks' fair-dispatch line). */
  tenant: string;
}
