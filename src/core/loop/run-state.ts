import type { ChildPayload } from '../input-payload.js';
import type { ToolCallRecord, Usage } from '../session-types.js';
import { NOOP_SPAN, type TraceSpan } from '../ports/tracing.js';

/**
 * The run's own counters: where it is, what it may still do and what it spent. Rebuilt from the
 * store at start (rounds and usage from the usage rows, in-doubt calls from the ledger), so any
 * worker continues any run. Each field is written by the one phase it belongs to, named below.
 */
export interface RunState {
  /** Index of the next round to run; advanced by `endRound`. */
  round: number;
  /** Rounds allowed before the wrap-up call; `complete.decide` may extend it. */
  roundLimit: number;
  /** Rounds before this index skip the budget check: a finalize window granted by `complete.decide`. */
  budgetGraceUntil: number;
  /** How often `complete.decide` extended the run. */
  completeDecideFires: number;
  /** Usage summed over this input's LLM calls, including calls made before a takeover (`usage.ts`). */
  usage: Usage;
  /** Real tool dispatches of this input (the tool phase). */
  toolCalls: number;
  /** Consecutive empty replies retried (the reply turn; a reply with tool calls resets it). */
  emptyStreak: number;
  /** Consecutive truncated replies answered with a notice (the reply turn). */
  truncationStreak: number;
  /** Corrective rounds spent on a reply that failed the response format (the reply turn). */
  structuredRetries: number;
  /**
   * Calls whose start this run recorded: one closed without its result (a break, a cancel, a failed
   * run) may have taken effect, and its synthetic result says so instead of "skipped".
   */
  startedCalls: Set<string>;
  /** This run started a child session or took a child's result: the finish sums the children's usage. */
  spawned: boolean;
  /**
   * The child results delivered to this input, as last read (`spawn-children.ts`): every result is
   * taken through a read, so the last one holds all of them and the finish needs no other.
   */
  childResults: ReadonlyMap<string, ChildPayload> | null;
  /** Ledger rows a previous holder left `started`: calls whose outcome is in doubt (I5), until resolved. */
  inDoubt: Map<string, ToolCallRecord>;
  /** The open input and round spans (docs/tracing.md); no-op spans with tracing off. */
  trace: RunTrace;
}

/** The open spans a run's phases hang theirs under: the input's, and the round's while one runs. */
export interface RunTrace {
  input: TraceSpan;
  round: TraceSpan;
}

/** A run's trace before it opened anything. */
export function emptyRunTrace(): RunTrace {
  return { input: NOOP_SPAN, round: NOOP_SPAN };
}
