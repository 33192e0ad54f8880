import { STALE_WORKER_MS, type AgentRegistration, type AgentRegistry, type RegisteredAgent } from '../../../src/core/ports/agent-registry.js';
import { DEFAULT_SESSION_AGENT } from '../../../src/fleet/agent-name.js';
import { checkRegistrations, checkStaleAfterMs, checkWorkerId } from '../../../src/store/agents/registration-checks.js';
import { groupAgentRows } from '../../../src/store/agents/list-agents.js';
import { compareText } from './in-memory-store-rows.js';

interface WorkerRow extends AgentRegistration {
  workerId: string;
  registeredAt: Date;
  seenAt: Date;
  stoppedAt: Date | null;
}

/**
 * The {@link AgentRegistry} port in memory, keeping the Postgres registry's contract (the contract
 * suite runs against both). {@link InMemorySessionStore} checks the agents its accepts name against
 * one of these (`served`).
 */
export class InMemoryAgentRegistry implements AgentRegistry {
  /** Rows by worker id. */
  readonly #workers = new Map<string, WorkerRow[]>();

  /** @param now Milliseconds since the epoch: the "database clock" of `seen_at`. */
  constructor(private readonly now: () => number = () => Date.now()) {}

  async registerAgents(workerId: string, agents: readonly AgentRegistration[]): Promise<void> {
    const id = checkWorkerId(workerId);
    const at = new Date(this.now());
    const rows = checkRegistrations(agents).map((agent) => ({ ...agent, workerId: id, registeredAt: at, seenAt: at, stoppedAt: null }));
    if (rows.length === 0) this.#workers.delete(id);
    else this.#workers.set(id, rows);
  }

  async touchWorker(workerId: string): Promise<boolean> {
    const rows = this.#workers.get(checkWorkerId(workerId)) ?? [];
    const at = new Date(this.now());
    for (const row of rows) row.seenAt = at;
    return rows.length > 0;
  }

  async unregisterWorker(workerId: string): Promise<void> {
    const at = new Date(this.now());
    for (const row of this.#workers.get(checkWorkerId(workerId)) ?? []) row.stoppedAt ??= at;
  }

  async listAgents(): Promise<RegisteredAgent[]> {
    const rows = this.#liveRows().sort((a, b) => compareText(a.name, b.name) || compareText(a.version, b.version) || compareText(a.workerId, b.workerId));
    return groupAgentRows(rows.map((row) => ({ ...row, tools: [...row.tools], registeredAt: new Date(row.registeredAt), seenAt: new Date(row.seenAt), stoppedAt: row.stoppedAt === null ? null : new Date(row.stoppedAt) })));
  }

  async pruneWorkers(staleAfterMs: number): Promise<number> {
    const bound = this.now() - checkStaleAfterMs(staleAfterMs);
    let pruned = 0;
    for (const [workerId, rows] of this.#workers) {
      const kept = rows.filter((row) => row.seenAt.getTime() >= bound);
      if (kept.length === rows.length) continue;
      pruned += 1;
      if (kept.length === 0) this.#workers.delete(workerId);
      else this.#workers.set(workerId, kept);
    }
    return pruned;
  }

  /** Whether a session may take this agent: the default one, or one a live worker registered. */
  served(name: string): boolean {
    return name === DEFAULT_SESSION_AGENT || this.#liveRows().some((row) => row.name === name);
  }

  #liveRows(): WorkerRow[] {
    const bound = this.now() - STALE_WORKER_MS;
    return [...this.#workers.values()].flat().filter((row) => row.seenAt.getTime() > bound);
  }
}
