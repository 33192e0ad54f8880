import { SessionNotFoundError } from '../core/errors/index.js';
import type { ClientStore } from '../core/ports/client-store.js';
import type { ChildSessionRecord } from '../core/ports/session-store.js';
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
  /** Where the session sits in its tree of child sessions (docs/child-sessions.md). */
  tree: SessionTree;
}

/** A session's place among child sessions: its parent, root and depth, and its own children. */
export interface SessionTree {
  /** Null for a session a producer created. */
  parentSessionId: string | null;
  /** Its own id when it is a root. */
  rootSessionId: string;
  /** 0 for a root. */
  depth: number;
  /** Its children in spawn order, as `sessions.children(id)` lists them. */
  children: ChildSummary[];
}

/** One child session, as its parent sees it. */
export interface ChildSummary {
  sessionId: string;
  agent: string;
  /** The parent's `spawn_agent` call that started it. */
  toolCallId: string;
  /** Its delivered outcome (`completed`, `failed` …) or, before that, `pending`, `running`, `waiting_for_input` or `waiting_for_children`. */
  status: string;
}

/** The children as the client shows them. */
export function childSummaries(children: readonly ChildSessionRecord[]): ChildSummary[] {
  return children.map((child) => ({ sessionId: child.sessionId, agent: child.agent, toolCallId: child.toolCallId, status: child.status }));
}

/**
 * Reads the session's stats, counts its inputs by status and lists its children: three reads, made
 * together, whatever the size of the inbox (the session row, one aggregate — no input row crosses
 * the wire — and the children's rows). Throws
 * `session.not_found`.
 */
export async function readSessionStats(store: ClientStore, sessionId: string): Promise<SessionStatsReport> {
  // All settle before this returns, so a caller that closes the pool next never strands the others.
  const [sessionRead, countsRead, childrenRead] = await Promise.allSettled([store.getSession(sessionId), store.countInputs(sessionId), store.listChildren(sessionId)]);
  if (sessionRead.status === 'rejected') throw sessionRead.reason;
  if (countsRead.status === 'rejected') throw countsRead.reason;
  if (childrenRead.status === 'rejected') throw childrenRead.reason;
  const session = sessionRead.value;
  const counts = countsRead.value;
  if (session === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  const tree: SessionTree = { parentSessionId: session.parentSessionId, rootSessionId: session.rootSessionId, depth: session.depth, children: childSummaries(childrenRead.value) };
  return { sessionId, agent: session.agent, status: session.status, totals: { ...session.stats }, inputs: withTotal(counts), tree };
}

/** The port's counts with their sum; only the statuses of `INPUT_STATUSES` are copied and summed. */
function withTotal(byStatus: Record<InputStatus, number>): InputCounts {
  const counts = Object.fromEntries(INPUT_STATUSES.map((status) => [status, byStatus[status]])) as Record<InputStatus, number>;
  const total = INPUT_STATUSES.reduce((sum, status) => sum + counts[status], 0);
  return Object.assign(counts, { total });
}
