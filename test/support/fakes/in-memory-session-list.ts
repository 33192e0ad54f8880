import type * as Port from '../../../src/core/ports/session-store.js';
import type { SessionRecord } from '../../../src/core/session-types.js';
import { cursorTime, encodeSessionCursor, resolveSessionList, type SessionCursor } from '../../../src/store/sessions/list-sessions-options.js';
import { compareText } from './in-memory-store-rows.js';

/**
 * `listSessions` over the fake's session records, as the Postgres store answers it: newest first by
 * creation time then id, filtered, a page after the cursor. Times hold milliseconds only, so their
 * cursor text ends in `000`.
 */
export function listSessionRecords(records: Iterable<SessionRecord>, options: Port.ListSessionsOptions): Port.SessionPage {
  const list = resolveSessionList(options);
  const matching = [...records]
    .filter(
      (r) =>
        (list.tenant === null || r.tenant === list.tenant) &&
        (list.agent === null || r.agent === list.agent) &&
        (list.status === null || r.status === list.status) &&
        (list.idPrefix === null || r.id.startsWith(list.idPrefix)) &&
        (list.after === null || olderThan(r, list.after)),
    )
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || compareText(b.id, a.id));
  const page = matching.slice(0, list.limit);
  const last = page.at(-1);
  return {
    sessions: page.map((r) => ({
      id: r.id,
      tenant: r.tenant,
      agent: r.agent,
      status: r.status,
      parentSessionId: r.parentSessionId,
      inputs: r.nextSeq,
      stats: structuredClone(r.stats),
      createdAt: new Date(r.createdAt),
      lastActivityAt: new Date(r.updatedAt),
    })),
    nextCursor: matching.length > list.limit && last !== undefined ? encodeSessionCursor({ createdAt: cursorTime(last.createdAt), id: last.id }) : null,
  };
}

/** `(created_at, id) < (cursor)`: the cursor's microseconds compare as text (same width). */
function olderThan(r: SessionRecord, cursor: SessionCursor): boolean {
  const at = cursorTime(r.createdAt);
  return at < cursor.createdAt || (at === cursor.createdAt && compareText(r.id, cursor.id) < 0);
}
