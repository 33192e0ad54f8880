import { z } from 'zod';
import type { RegisteredAgent } from '../../core/ports/agent-registry.js';
import type { Queryable } from '../postgres/queryable.js';
import { parseRow } from '../rows/parse-row.js';
import { LIST_AGENTS_SQL } from './list-agents-sql.js';

const agentRowSchema = z.object({
  name: z.string(),
  version: z.string(),
  provider: z.string(),
  model: z.string(),
  tools: z.array(z.string()),
  workerId: z.string(),
  registeredAt: z.date(),
  seenAt: z.date(),
  stoppedAt: z.date().nullable(),
});

type AgentRow = z.infer<typeof agentRowSchema>;

/** The registry by (name, version), each with its workers seen within a day (running or stopped). */
export async function listAgents(db: Queryable): Promise<RegisteredAgent[]> {
  const result = await db.query(LIST_AGENTS_SQL);
  const rows = result.rows.map((row: unknown) => parseRow(agentRowSchema, row, 'an agent registry row'));
  return groupAgentRows(rows);
}

/**
 * Rows sorted by name, version and worker, grouped into one entry per (name, version). The agent's
 * fields are its first worker's: workers with the same version registered the same definition.
 */
export function groupAgentRows(rows: readonly AgentRow[]): RegisteredAgent[] {
  const agents: RegisteredAgent[] = [];
  for (const row of rows) {
    const last = agents.at(-1);
    const worker = { workerId: row.workerId, registeredAt: row.registeredAt, seenAt: row.seenAt, stoppedAt: row.stoppedAt };
    if (last !== undefined && last.name === row.name && last.version === row.version) {
      last.workers.push(worker);
    } else {
      agents.push({ name: row.name, version: row.version, provider: row.provider, model: row.model, tools: [...row.tools], workers: [worker] });
    }
  }
  return agents;
}
