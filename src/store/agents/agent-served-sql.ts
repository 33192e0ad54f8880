import { STALE_WORKER_MS } from '../../core/ports/agent-registry.js';
import { DEFAULT_SESSION_AGENT } from '../../fleet/agent-name.js';

/**
 * A condition, true when the agent named by the SQL expression `name` may take a session: it is the
 * default agent, or a worker seen within `STALE_WORKER_MS` registered it (reads
 * `agent_registry_name_idx`). The accept and the create put it in the statement that writes.
 */
export function agentServedSql(name: string): string {
  return `(${name} = '${DEFAULT_SESSION_AGENT}' OR EXISTS (SELECT 1 FROM agent_registry a
           WHERE a.name = ${name} AND a.seen_at > now() - interval '${STALE_WORKER_MS} milliseconds'))`;
}
