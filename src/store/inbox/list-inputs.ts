import pg from 'pg';
import { InputInvalidError } from '../../core/errors/index.js';
import type { ListInputsOptions } from '../../core/ports/session-store.js';
import { INPUT_STATUSES, type InputRecord, type InputStatus } from '../../core/session-types.js';
import { assertSessionId } from '../../fleet/session-id.js';
import type { ReadBatcher, ReadKind } from '../batching/read-batcher.js';
import { decodeInput } from '../rows/input-row.js';
import { listInputsSql } from './select-inputs-sql.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;

/** The filter of a page read: statuses (null: any) and whether only inputs that change a run. */
interface InputFilter {
  statuses: readonly InputStatus[] | null;
  affectsRun: boolean;
}

interface InputPageRead {
  sessionId: string;
  afterSeq: number;
  limit: number;
}

/** One read kind per status filter: pages of different sessions with the same filter share a statement. */
const kinds = new Map<string, ReadKind<InputPageRead>>();

function pagesOf(filter: InputFilter): ReadKind<InputPageRead> {
  const { statuses, affectsRun } = filter;
  const key = `inputs:${statuses === null ? '*' : statuses.join(',')}${affectsRun ? ':affects-run' : ''}`;
  let kind = kinds.get(key);
  if (kind === undefined) {
    kind = {
      key,
      statements: 1,
      sql: (reads) => listInputsSql(statuses, affectsRun, reads.map((read) => ({ sessionLiteral: pg.escapeLiteral(read.sessionId), afterSeq: read.afterSeq, limit: read.limit }))),
    };
    kinds.set(key, kind);
  }
  return kind;
}

/**
 * A page of a session's inputs in seq order, optionally only some statuses, each validated. Read in
 * one round trip shared with other sessions' reads made at the same moment (the run's steering check
 * after a final reply is on the hot path), so the values are inlined once validated.
 */
export async function listInputs(reads: ReadBatcher, sessionId: string, options: ListInputsOptions = {}): Promise<InputRecord[]> {
  const id = assertSessionId(sessionId);
  const statuses = statusFilter(options.status);
  const afterSeq = options.afterSeq ?? 0;
  if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw new InputInvalidError('afterSeq must be a non-negative integer');
  const limit = options.limit ?? DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new InputInvalidError(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  const affectsRun = options.affectsRun ?? false;
  if (typeof affectsRun !== 'boolean') throw new InputInvalidError('affectsRun must be a boolean');
  const [rows = []] = await reads.submit(pagesOf({ statuses, affectsRun }), { sessionId: id, afterSeq, limit });
  return rows.map((row: unknown) => decodeInput(row));
}

function statusFilter(status: ListInputsOptions['status']): InputStatus[] | null {
  if (status === undefined) return null;
  const list = Array.isArray(status) ? status : [status];
  for (const value of list) {
    if (!(INPUT_STATUSES as readonly string[]).includes(value)) {
      throw new InputInvalidError(`status must be one of ${INPUT_STATUSES.join(', ')}`, { details: { received: String(value) } });
    }
  }
  return list;
}
