import type { StrandedQuery, StrandedSession } from '../../core/ports/upkeep-store.js';
import type { Queryable } from '../postgres/queryable.js';
import { FIND_STRANDED_SESSIONS_SQL } from './find-stranded-sessions-sql.js';

/**
 * The sweeper's query (I1, I6): session ids with open inputs and no live lease, or with a
 * lease that lapsed unreleased (a dead holder). It reads only open inputs (partial index) and unreleased
 * leases (index), so its cost follows the backlog, not the history.
 */
export async function findStrandedSessions(db: Queryable, query: StrandedQuery): Promise<StrandedSession[]> {
  const result = await db.query<StrandedSession>(FIND_STRANDED_SESSIONS_SQL, [query.graceMs, query.limit, query.queue ?? null]);
  return result.rows.map((row) => ({ sessionId: row.sessionId, tenant: row.tenant, parkFor: row.parkFor }));
}
