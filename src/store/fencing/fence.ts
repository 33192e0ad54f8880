import { LeaseLostError } from '../../core/errors/index.js';

/** The `lease.lost` error of a fenced write refused because the token is no longer current. */
export function leaseLost(sessionId: string, leaseToken: number, operation: string): LeaseLostError {
  return new LeaseLostError(`${operation} refused: lease token ${leaseToken} of session ${sessionId} is no longer current`, {
    details: { sessionId, leaseToken, operation },
  });
}
