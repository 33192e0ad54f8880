/** Inputs waiting, across every session. */
export interface Backlog {
  /** Inputs accepted and not started. */
  pending: number;
  /** Sessions whose next input a worker could start now: nothing of theirs runs, one waits. */
  sessionsWaiting: number;
  /** How long the oldest of those inputs has waited, in seconds (0 when none does). */
  oldestWaitSeconds: number;
}

/** Which stranded sessions the sweeper asks for. */
export interface StrandedQuery {
  /** Inputs younger than this are left alone: their kick is probably on its way. Milliseconds. */
  graceMs: number;
  /** Most sessions returned per sweep. */
  limit: number;
  /**
   * Only sessions of this queue (and those from before queues were recorded). Absent: every queue's.
   * A sweeper passes its own: it must never run another queue's sessions (docs/fleet.md).
   */
  queue?: string;
}

/** A session the sweeper wakes, or parks, with its tenant (the line its kick joins). */
export interface StrandedSession {
  sessionId: string;
  tenant: string;
  /**
   * Its tenant, when that tenant caps its inputs running at once and has no free slot left for it
   * this sweep: park the session with the tenant's others instead of kicking it (docs/tenant-limits.md).
   */
  parkFor: string | null;
}

/**
 * The fleet-wide reads a worker makes besides its drains: the sweeper's stranded sessions and the
 * backlog it reports for scaling. Failures are the database's own (not wrapped).
 */
export interface UpkeepStore {
  /** Session ids with open inputs and no live lease, or a lease that lapsed unreleased (I1, I6). */
  findStrandedSessions(query: StrandedQuery): Promise<StrandedSession[]>;
  /**
   * One aggregate read of the backlog (for `/metrics`: the signal to scale workers on): of the
   * sessions of `queue` (and those from before queues were recorded) when given, else of every queue.
   */
  readBacklog(queue?: string): Promise<Backlog>;
}
