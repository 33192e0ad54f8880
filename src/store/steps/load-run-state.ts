import pg from 'pg';
import { z } from 'zod';
import type { StoredMessage } from '../../core/messages.js';
import type { RunState } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertSeq } from '../postgres/arguments.js';
import type { ReadBatcher, ReadKind } from '../batching/read-batcher.js';
import { decodeMessage } from '../rows/message-row.js';
import { parseRow } from '../rows/parse-row.js';
import { decodeToolCall } from '../rows/tool-call-row.js';
import { decodeUsageRound } from '../rows/usage-round-row.js';
import { loadRunStateSql } from './load-run-state-sql.js';
import type { CachedWindow, WindowCache } from './window-cache.js';

interface RunStateRead {
  sessionId: string;
  inputSeq: number;
  cached: CachedWindow | null;
}

/** Run starts of different sessions share the three statements of {@link loadRunStateSql}. */
const RUN_STATE: ReadKind<RunStateRead> = {
  key: 'run-state',
  statements: 3,
  sql: (reads) =>
    loadRunStateSql(
      reads.map((read) => ({
        sessionLiteral: pg.escapeLiteral(read.sessionId),
        inputSeq: read.inputSeq,
        cached: read.cached,
      })),
    ),
};

/** The window statement's rows: the epoch on each, message columns null on a session's only row when none was read. */
const windowEpochSchema = z.object({ windowEpoch: z.number().int().positive(), seq: z.unknown() });

/**
 * The window, the input's usage rows and the open ledger rows, in one round trip shared with other
 * sessions' reads made at the same moment; every row validated as by the stand-alone reads. A window
 * the worker holds in `windows` is read from its last seq on, while its epoch is current.
 */
export async function loadRunState(reads: ReadBatcher, windows: WindowCache, sessionId: string, inputSeq: number): Promise<RunState> {
  const id = assertSessionId(sessionId);
  const seq = assertSeq(inputSeq, 'inputSeq');
  const cached = windows.lookup(id);
  const [windowRows = [], usage = [], open = []] = await reads.submit(RUN_STATE, { sessionId: id, inputSeq: seq, cached });
  return {
    window: decodeWindow(windows, id, cached, windowRows),
    usageRounds: usage.map((row: unknown) => decodeUsageRound(row)),
    openToolCalls: open.map((row: unknown) => decodeToolCall(row)),
  };
}

function decodeWindow(windows: WindowCache, id: string, cached: CachedWindow | null, rows: readonly unknown[]): StoredMessage[] {
  const first = rows[0];
  if (first === undefined) {
    // No such session (any more): nothing to keep.
    windows.drop(id);
    return [];
  }
  const { windowEpoch } = parseRow(windowEpochSchema, first, `window epoch of session ${id}`);
  const messages = (first as { seq: unknown }).seq === null ? [] : rows.map((row) => decodeMessage(id, row));
  return windows.merge(id, cached, windowEpoch, messages);
}
