import type { ToolCallRecord } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { Queryable } from '../postgres/queryable.js';
import { decodeToolCall } from '../rows/tool-call-row.js';
import { LOAD_OPEN_TOOL_CALLS_SQL } from './load-open-tool-calls-sql.js';

/**
 * Ledger rows still `started` or `in_doubt`: after a takeover, the calls whose outcome is unknown
 * and must be settled by their tool's policy (I5).
 */
export async function loadOpenToolCalls(db: Queryable, sessionId: string): Promise<ToolCallRecord[]> {
  const id = assertSessionId(sessionId);
  const result = await db.query(LOAD_OPEN_TOOL_CALLS_SQL, [id]);
  return result.rows.map((row: unknown) => decodeToolCall(row));
}
