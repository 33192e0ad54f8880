import { SESSION_STATS_COLUMNS } from '../rows/session-row.js';
import type { ResolvedSessionList } from './list-sessions-options.js';

/** The columns of a session summary, and its `created_at` as cursor text (UTC, microseconds). */
const SUMMARY_COLUMNS = `id, tenant, agent, status, parent_session_id AS "parentSessionId", next_seq AS "nextSeq",
  ${SESSION_STATS_COLUMNS}, created_at AS "createdAt", updated_at AS "updatedAt",
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "cursorAt"`;

/**
 * One page of sessions, newest first, in one statement: `ORDER BY created_at DESC, id DESC` with a
 * keyset condition for the cursor, served by `sessions_created_idx` or, with a tenant,
 * `sessions_tenant_created_idx`. Only the filters asked for are in the text, so each plan fits them.
 * The id prefix is compared with `starts_with`, so `_` (and anything else) is taken literally. It asks
 * for one row more than the page holds: its presence says another page follows.
 */
export function listSessionsQuery(list: ResolvedSessionList): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const where: string[] = [];
  const param = (value: unknown): string => {
    values.push(value);
    return `$${values.length}`;
  };
  if (list.tenant !== null) where.push(`tenant = ${param(list.tenant)}`);
  if (list.agent !== null) where.push(`agent = ${param(list.agent)}`);
  if (list.status !== null) where.push(`status = ${param(list.status)}`);
  if (list.idPrefix !== null) where.push(`starts_with(id, ${param(list.idPrefix)})`);
  if (list.after !== null) where.push(`(created_at, id) < (${param(list.after.createdAt)}::timestamptz, ${param(list.after.id)}::text)`);
  const filter = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
  const text = `SELECT ${SUMMARY_COLUMNS} FROM sessions ${filter} ORDER BY created_at DESC, id DESC LIMIT ${param(list.limit + 1)}`;
  return { text, values };
}
