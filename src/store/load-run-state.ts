import pg from 'pg';
import type { RunState } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { assertSeq } from './arguments.js';
import { decodeMessage } from './rows/message-row.js';
import { decodeToolCall } from './rows/tool-call-row.js';
import { decodeUsageRound } from './rows/usage-round-row.js';
import type { ReadBatcher } from './read-batcher.js';
import { loadRunStateSql } from './sql/load-run-state.js';

/**
 * The window, the input's usage rows and the open ledger rows, in one round trip (see
 * {@link loadRunStateSql}) shared with other sessions' reads made at the same moment; every row
 * validated as by the stand-alone reads.
 */
export async function loadRunState(reads: ReadBatcher, sessionId: string, inputSeq: number): Promise<RunState> {
  const id = assertSessionId(sessionId);
  const seq = assertSeq(inputSeq, 'inputSeq');
  const results = await reads.submit({ sql: loadRunStateSql(pg.escapeLiteral(id), seq), results: 3 });
  const [window, usage, open] = results;
  if (window === undefined || usage === undefined || open === undefined) throw new Error('loadRunState: expected three results');
  return {
    window: window.rows.map((row: unknown) => decodeMessage(id, row)),
    usageRounds: usage.rows.map((row: unknown) => decodeUsageRound(row)),
    openToolCalls: open.rows.map((row: unknown) => decodeToolCall(row)),
  };
}
