import { STALE_WORKER_MS } from '../../core/ports/agent-registry.js';

/**
 * Every row of a worker seen within `STALE_WORKER_MS`, by agent name, version and worker id (byte
 * order, as the in-memory store sorts). One row per worker and agent; the caller groups them.
 */
export const LIST_AGENTS_SQL = `
SELECT name, version, provider, model, tools, worker_id AS "workerId", registered_at AS "registeredAt", seen_at AS "seenAt",
       stopped_at AS "stoppedAt"
  FROM agent_registry
 WHERE seen_at > now() - interval '${STALE_WORKER_MS} milliseconds'
 ORDER BY name COLLATE "C", version COLLATE "C", worker_id COLLATE "C"`;
