import type { AgentRegistration } from '../../core/ports/agent-registry.js';
import type { Queryable } from '../postgres/queryable.js';
import { checkRegistrations, checkWorkerId } from './registration-checks.js';
import { REGISTER_AGENTS_SQL } from './register-agents-sql.js';

/** Replaces the worker's rows with `agents`, in one statement; checks everything first (`input.invalid`). */
export async function registerAgents(db: Queryable, workerId: string, agents: readonly AgentRegistration[]): Promise<void> {
  const id = checkWorkerId(workerId);
  const rows = checkRegistrations(agents);
  await db.query(REGISTER_AGENTS_SQL, [id, JSON.stringify(rows)]);
}
