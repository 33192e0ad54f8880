import { SessionNotFoundError } from '../core/errors/index.js';
import type { ClientStore } from '../core/ports/client-store.js';
import { INPUT_STATUSES, type InputStatus, type SessionStats, type SessionStatus } from '../core/session-types.js';

/** How many of a session's inputs are in each status, and in all. */
export type InputCounts = Record<InputStatus, number> & { total: number };

/** `SessionQueue.stats`: what a session has done so far. */
export interface SessionStatsReport {
  sessionId: string;
  /** The agent the session runs on (`default`: the fleet's default agent). */
  agent: string;
  /** `idle`, `running` or `waiting_for_input`. */
  status: SessionStatus;
  /** Cumulative counters over every finished input: inputs, rounds, LLM calls, tool calls, tokens, first/last. */
  totals: SessionStats;
  /** The inbox by status. */
  inputs: InputCounts;
}

/**
 * Reads the session's stats and counts its inputs by status: two reads, made together, whatever the
 * size of the inbox (the session row and one aggregate — no input row crosses the wire). Throws
 * `session.not_found`.
 */
export async function readSessionStats(store: ClientStore, sessionId: string): Promise<SessionStatsReport> {
  // Both settle before this returns, so a caller that closes the pool next never strands the other.
  const [sessionRead, countsRead] = await Promise.allSettled([store.getSession(sessionId), store.countInputs(sessionId)]);
  if (sessionRead.status === 'rejected') throw sessionRead.reason;
  if (countsRead.status === 'rejected') throw countsRead.reason;
  const session = sessionRead.value;
  const counts = countsRead.value;
  if (session === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  return { sessionId, agent: session.agent, status: session.status, totals: { ...session.stats }, inputs: withTotal(counts) };
}

/** The port's counts with their sum; only the statuses of `INPUT_STATUSES` are copied and summed. */
function withTotal(byStatus: Record<InputStatus, number>): InputCounts {
  const counts = Object.fromEntries(INPUT_STATUSES.map((status) => [status, byStatus[status]])) as Record<InputStatus, number>;
  const total = INPUT_STATUSES.reduce((sum, status) => sum + counts[status], 0);
  return Object.assign(counts, { total });
}
