import pg from 'pg';
import type { RunState } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { assertSeq } from './arguments.js';
import type { ReadBatcher, ReadKind } from './read-batcher.js';
import { decodeMessage } from './rows/message-row.js';
import { decodeToolCall } from './rows/tool-call-row.js';
import { decodeUsageRound } from './rows/usage-round-row.js';
import { loadRunStateSql } from './sql/load-run-state.js';

interface RunStateRead {
  sessionId: string;
  inputSeq: number;
}

/** Run starts of different sessions share the three statements of {@link loadRunStateSql}. */
const RUN_STATE: ReadKind<RunStateRead> = {
  key: 'run-state',
  statements: 3,
  sql: (reads) => loadRunStateSql(reads.map((read) => ({ sessionLiteral: pg.escapeLiteral(read.sessionId), inputSeq: read.inputSeq }))),
};

/**
 * The window, the input's usage rows and the open ledger rows, in one round trip shared with other
 * sessions' reads made at the same moment; every row validated as by the stand-alone reads.
 */
export async function loadRunState(reads: ReadBatcher, sessionId: string, inputSeq: number): Promise<RunState> {
  const id = assertSessionId(sessionId);
  const seq = assertSeq(inputSeq, 'inputSeq');
  const [window = [], usage = [], open = []] = await reads.submit(RUN_STATE, { sessionId: id, inputSeq: seq });
  return {
    window: window.map((row: unknown) => decodeMessage(id, row)),
    usageRounds: usage.map((row: unknown) => decodeUsageRound(row)),
    openToolCalls: open.map((row: unknown) => decodeToolCall(row)),
  };
}
