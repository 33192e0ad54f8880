/**
 * The fleet's registry of agents (docs/store.md, "The agent registry"): which worker serves which
 * agent, in which version. Workers write it; an add that names an agent is checked against it, and
 * `loopfleet agents` lists it.
 */

/**
 * A worker not seen for this long (stopped, or killed) counts as gone: its agents no longer let an
 * add through, are not listed, and the sweeper deletes its rows (24 hours).
 */
export const STALE_WORKER_MS = 24 * 60 * 60 * 1000;

/** One agent as a worker registers it. */
export interface AgentRegistration {
  /** 1–64 characters of `[A-Za-z0-9_.-]`; unique within one registration. */
  name: string;
  /** The version (hash) of the agent's definition: 1–64 characters. */
  version: string;
  provider: string;
  model: string;
  /** The names of the tools the agent may call. */
  tools: string[];
}

/** A worker serving an agent, and when it last said it was alive (database time). */
export interface AgentWorker {
  workerId: string;
  registeredAt: Date;
  seenAt: Date;
  /** When it stopped cleanly; null while it runs (or when it was killed: then `seenAt` grows old). */
  stoppedAt: Date | null;
}

/** One (name, version) of the registry, with every worker seen within {@link STALE_WORKER_MS} serving it. */
export interface RegisteredAgent {
  name: string;
  version: string;
  provider: string;
  model: string;
  tools: string[];
  /** By worker id. */
  workers: AgentWorker[];
}

/**
 * The registry as workers and the CLI use it. Arguments are checked first (`input.invalid`); other
 * failures are the database's own (not wrapped).
 */
export interface AgentRegistry {
  /** Replaces every row of the worker with these agents, in one transaction (an empty list removes them). */
  registerAgents(workerId: string, agents: readonly AgentRegistration[]): Promise<void>;
  /** Marks the worker seen now. False when it has no rows (pruned, or never registered): register again. */
  touchWorker(workerId: string): Promise<boolean>;
  /**
   * The worker stops: its rows are marked stopped and kept until pruned, so producers still accept its
   * agents while the fleet restarts (an input waits for a worker). A no-op when it has none.
   */
  unregisterWorker(workerId: string): Promise<void>;
  /** Every agent some worker seen within {@link STALE_WORKER_MS} serves, by name then version. */
  listAgents(): Promise<RegisteredAgent[]>;
  /** Deletes the rows of workers not seen for `staleAfterMs`; answers how many workers went. */
  pruneWorkers(staleAfterMs: number): Promise<number>;
}
