import type { Backlog, StrandedQuery, StrandedSession, UpkeepStore } from '../../core/ports/upkeep-store.js';
import type { Queryable } from '../postgres/queryable.js';
import { findStrandedSessions } from './find-stranded-sessions.js';
import { readBacklog } from './read-backlog.js';

/** {@link UpkeepStore} on a pool: one autocommit statement per call. */
export class PostgresUpkeepStore implements UpkeepStore {
  constructor(private readonly db: Queryable) {}

  findStrandedSessions(query: StrandedQuery): Promise<StrandedSession[]> {
    return findStrandedSessions(this.db, query);
  }

  readBacklog(queue?: string): Promise<Backlog> {
    return readBacklog(this.db, queue ?? null);
  }
}
