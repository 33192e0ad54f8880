import type { SessionStats, SessionStatus } from '../session-types.js';

/** Which sessions `listSessions` answers, and which page of them. Every filter is optional. */
export interface ListSessionsOptions {
  /** Only this tenant's sessions. */
  tenant?: string;
  /** Only sessions running on this agent. */
  agent?: string;
  /** Only sessions in this status. */
  status?: SessionStatus;
  /** Only sessions whose id starts with this text, taken literally (no wildcards). */
  idPrefix?: string;
  /** Sessions per page: 1–200, default 50. */
  limit?: number;
  /** Where the page starts: the `nextCursor` of the page before (opaque). Absent: the newest session. */
  cursor?: string;
}

/** One session in a list: what a session list shows, without the session's profile and lease. */
export interface SessionSummary {
  id: string;
  tenant: string;
  agent: string;
  status: SessionStatus;
  parentSessionId: string | null;
  /** Inputs accepted so far (the session's last input seq). */
  inputs: number;
  stats: SessionStats;
  createdAt: Date;
  /** The last change to the session row (`updatedAt`). */
  lastActivityAt: Date;
}

/** A page of sessions, newest first; `nextCursor` is null on the last page. */
export interface SessionPage {
  sessions: SessionSummary[];
  nextCursor: string | null;
}
