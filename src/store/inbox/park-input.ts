import { StateConflictError } from '../../core/errors/index.js';
import type { ParkInputParams } from '../../core/ports/session-store.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertAwaiting } from '../children/child-validation.js';
import { leaseLost } from '../fencing/fence.js';
import { assertLeaseToken, assertSeq } from '../postgres/arguments.js';
import type { Queryable } from '../postgres/queryable.js';
import { PARK_INPUT_SQL, PARK_REFUSAL_SQL } from './park-input-sql.js';

/**
 * Fenced. The running input waits for the child results of `awaiting` ({@link PARK_INPUT_SQL});
 * a claim wakes it once they are in, or a cancel was asked for. `lease.lost` for a stale token,
 * `state.conflict` when the input is not `running`; nothing is written either way.
 */
export async function parkInput(db: Queryable, params: ParkInputParams): Promise<void> {
  const sessionId = assertSessionId(params.sessionId);
  const leaseToken = assertLeaseToken(params.leaseToken);
  const inputSeq = assertSeq(params.inputSeq, 'inputSeq');
  const awaiting = JSON.stringify(assertAwaiting(params.awaiting));
  const parked = await db.query(PARK_INPUT_SQL, [sessionId, leaseToken, inputSeq, awaiting]);
  if (parked.rowCount === 1) return;
  // Refused: read why, after the fact. Tokens are never reused, so a current token means the input was not running.
  const refusal = await db.query<{ leaseHeld: boolean; status: string | null }>(PARK_REFUSAL_SQL, [sessionId, leaseToken, inputSeq]);
  const row = refusal.rows[0];
  if (row === undefined || !row.leaseHeld) throw leaseLost(sessionId, leaseToken, 'parkInput');
  throw new StateConflictError(`input ${inputSeq} of session ${sessionId} is ${row.status ?? 'missing'}, not running: it cannot wait for children`, {
    details: { sessionId, inputSeq, status: row.status },
  });
}
