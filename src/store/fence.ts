import type pg from 'pg';
import { LeaseLostError } from '../core/errors/index.js';
import { LOCK_FENCED_SESSION_SQL } from './sql/lock-fenced-session.js';

/** The `lease.lost` error of a fenced write refused because the token is no longer current. */
export function leaseLost(sessionId: string, leaseToken: number, operation: string): LeaseLostError {
  return new LeaseLostError(`${operation} refused: lease token ${leaseToken} of session ${sessionId} is no longer current`, {
    details: { sessionId, leaseToken, operation },
  });
}

/**
 * Opens a fenced transaction's critical section: locks the session row if the token is current,
 * else throws `lease.lost` (the caller's transaction then rolls back, so nothing is written).
 */
export async function lockFencedSession(
  client: pg.PoolClient,
  sessionId: string,
  leaseToken: number,
  operation: string,
): Promise<void> {
  const locked = await client.query(LOCK_FENCED_SESSION_SQL, [sessionId, leaseToken]);
  if (locked.rowCount !== 1) throw leaseLost(sessionId, leaseToken, operation);
}
