import type { AgentRegistration, AgentRegistry, RegisteredAgent } from '../../core/ports/agent-registry.js';
import type { Queryable } from '../postgres/queryable.js';
import { listAgents } from './list-agents.js';
import { registerAgents } from './register-agents.js';
import { pruneWorkers, touchWorker, unregisterWorker } from './worker-rows.js';

/** {@link AgentRegistry} on a pool: one autocommit statement per call. */
export class PostgresAgentRegistry implements AgentRegistry {
  constructor(private readonly db: Queryable) {}

  registerAgents(workerId: string, agents: readonly AgentRegistration[]): Promise<void> {
    return registerAgents(this.db, workerId, agents);
  }

  touchWorker(workerId: string): Promise<boolean> {
    return touchWorker(this.db, workerId);
  }

  unregisterWorker(workerId: string): Promise<void> {
    return unregisterWorker(this.db, workerId);
  }

  listAgents(): Promise<RegisteredAgent[]> {
    return listAgents(this.db);
  }

  pruneWorkers(staleAfterMs: number): Promise<number> {
    return pruneWorkers(this.db, staleAfterMs);
  }
}
