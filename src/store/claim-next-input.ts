import type pg from 'pg';
import type { ClaimedInput, FencedParams } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import { assertLeaseToken } from './arguments.js';
import { lockFencedSession } from './fence.js';
import { decodeInput } from './rows/input-row.js';
import { CLAIM_NEXT_INPUT_SQL } from './sql/claim-next-input.js';
import { withTransaction } from './transaction.js';

/**
 * Fenced. Starts (or resumes) the session's lowest open input. The lock is taken in its own
 * statement first, so the claim that follows reads a snapshot that includes every input accepted
 * before the lock was granted.
 */
export async function claimNextInput(pool: pg.Pool, params: FencedParams): Promise<ClaimedInput | null> {
  const sessionId = assertSessionId(params.sessionId);
  const leaseToken = assertLeaseToken(params.leaseToken);
  return withTransaction(pool, async (client) => {
    await lockFencedSession(client, sessionId, leaseToken, 'claimNextInput');
    const claimed = await client.query<{ resumed: unknown }>(CLAIM_NEXT_INPUT_SQL, [sessionId]);
    const row = claimed.rows[0];
    if (row === undefined) return null;
    const { resumed, ...inputRow } = row;
    return { input: decodeInput(inputRow), resumed: resumed === true };
  });
}
