import { SessionNotFoundError } from '../core/errors/index.js';
import type { SessionStore } from '../core/ports/session-store.js';
import { INPUT_STATUSES, type InputStatus, type SessionStats, type SessionStatus } from '../core/session-types.js';

/** How many of a session's inputs are in each status, and in all. */
export type InputCounts = Record<InputStatus, number> & { total: number };

/** `SessionQueue.stats`: what a session has done so far. */
export interface SessionStatsReport {
  sessionId: string;
  /** `idle`, `running` or `waiting_for_input`. */
  status: SessionStatus;
  /** Cumulative counters over every finished input: inputs, rounds, LLM calls, tool calls, tokens, first/last. */
  totals: SessionStats;
  /** The inbox by status. */
  inputs: InputCounts;
}

const PAGE = 1000;

/** Reads the session's stats and counts its inputs by status. Throws `session.not_found`. */
export async function readSessionStats(store: SessionStore, sessionId: string): Promise<SessionStatsReport> {
  const session = await store.getSession(sessionId);
  if (session === null) throw new SessionNotFoundError(`session ${sessionId} does not exist`, { details: { sessionId } });
  return { sessionId, status: session.status, totals: { ...session.stats }, inputs: await countInputs(store, sessionId) };
}

/** Pages through the inbox: the store port has no count query, and a page costs one round trip. */
async function countInputs(store: SessionStore, sessionId: string): Promise<InputCounts> {
  const counts = Object.fromEntries(INPUT_STATUSES.map((status) => [status, 0])) as Record<InputStatus, number>;
  let total = 0;
  let afterSeq = 0;
  for (;;) {
    const page = await store.listInputs(sessionId, { afterSeq, limit: PAGE });
    for (const input of page) counts[input.status] += 1;
    total += page.length;
    const last = page[page.length - 1];
    if (last === undefined || page.length < PAGE) return Object.assign({}, counts, { total });
    afterSeq = last.seq;
  }
}
