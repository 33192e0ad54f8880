import { AuthForbiddenError, StateConflictError } from '../core/errors/index.js';
import type { SessionStats, SessionStatus } from '../core/session-types.js';
import type { SessionQueue } from '../producer/session-queue.js';
import { coversSessionId, type Principal } from './principal.js';

/** `queue.sessions.list` options (docs/client.md). */
export interface ListSessionsOptions {
  tenant?: string;
  agent?: string;
  status?: SessionStatus;
  idPrefix?: string;
  limit?: number;
  cursor?: string;
}

/** One session of a listing. */
export interface SessionSummary {
  id: string;
  tenant: string;
  agent: string;
  status: SessionStatus;
  parentSessionId: string | null;
  inputs: number;
  stats: SessionStats;
  createdAt: Date;
  lastActivityAt: Date;
}

/** A page of a listing, newest first; `nextCursor` null on the last page. */
export interface SessionPage {
  sessions: SessionSummary[];
  nextCursor: string | null;
}

/** The listing query as the route received it. */
export interface ListQuery {
  tenant?: string;
  agent?: string;
  status?: SessionStatus;
  prefix?: string;
  limit?: number;
  cursor?: string;
}

/**
 * A page of the sessions the caller may see: its tenant's only (another tenant named is
 * `auth.forbidden`), narrowed to its `sessions` claim — by id prefix when the claim is one pattern,
 * else by filtering the page (which may then be shorter than `limit`).
 */
export async function listForCaller(queue: SessionQueue, principal: Principal, query: ListQuery): Promise<SessionPage> {
  if (principal.tenant !== null && query.tenant !== undefined && query.tenant !== principal.tenant) {
    throw new AuthForbiddenError(`the token acts for tenant ${principal.tenant}, not ${query.tenant}`);
  }
  const idPrefix = narrowPrefix(principal.sessions, query.prefix);
  if (idPrefix === null) return { sessions: [], nextCursor: null };
  const options: ListSessionsOptions = {};
  const tenant = principal.tenant ?? query.tenant;
  if (tenant !== undefined) options.tenant = tenant;
  if (query.agent !== undefined) options.agent = query.agent;
  if (query.status !== undefined) options.status = query.status;
  if (idPrefix !== undefined) options.idPrefix = idPrefix;
  if (query.limit !== undefined) options.limit = query.limit;
  if (query.cursor !== undefined) options.cursor = query.cursor;
  const page = await lister(queue).list(options);
  if (principal.sessions === null) return page;
  return { sessions: page.sessions.filter((session) => coversSessionId(principal, session.id)), nextCursor: page.nextCursor };
}

/**
 * The id prefix to list by: the query's, narrowed by a one-pattern `sessions` claim (an exact id
 * lists by itself as a prefix, then the filter keeps it alone). Null when the two exclude each other.
 */
function narrowPrefix(claim: readonly string[] | null, requested: string | undefined): string | undefined | null {
  if (claim === null || claim.length !== 1) return requested;
  const pattern = claim[0]!;
  const own = pattern.endsWith('*') ? pattern.slice(0, -1) : pattern;
  if (requested === undefined || own.startsWith(requested)) return own === '' ? requested : own;
  if (requested.startsWith(own)) return pattern.endsWith('*') ? requested : null;
  return null;
}

interface SessionLister {
  list(options: ListSessionsOptions): Promise<SessionPage>;
}

/** `queue.sessions.list`, which comes with the tenant column (migration 0008). */
function lister(queue: SessionQueue): SessionLister {
  const admin = queue.sessions as unknown as Partial<SessionLister>;
  if (typeof admin.list !== 'function') throw new StateConflictError('this store has no session listing');
  return admin as SessionLister;
}
