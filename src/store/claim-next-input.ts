import type { ClaimedInput, FencedParams } from '../core/ports/session-store.js';
import { StateCorruptError } from '../core/errors/index.js';
import { assertSessionId } from '../core/session-id.js';
import { assertLeaseToken } from './arguments.js';
import { leaseLost } from './fence.js';
import { decodeInput } from './rows/input-row.js';
import { unprefixed } from './rows/prefixed-row.js';
import { decodeSession } from './rows/session-row.js';
import type { RowBatcher } from './row-batcher.js';
import { CLAIM_FOR, CLAIM_NEXT_INPUTS, SESSION_PREFIX } from './sql/claim-next-input.js';

interface ClaimRow extends Record<string, unknown> {
  seq: unknown;
  resumed: unknown;
  pendingInputs: unknown;
  pendingSteers: unknown;
}

/**
 * Fenced. Starts (or resumes) the session's lowest open input, in one statement shared with other
 * sessions' next claims (see {@link CLAIM_NEXT_INPUTS}); null when none is open, `lease.lost` when
 * the token is not current.
 */
export async function claimNextInput(batcher: RowBatcher, params: FencedParams): Promise<ClaimedInput | null> {
  const sessionId = assertSessionId(params.sessionId);
  const leaseToken = assertLeaseToken(params.leaseToken);
  const record = `{"session_id":${JSON.stringify(sessionId)},"lease_token":${leaseToken}}`;
  const answer = (await batcher.submit({ statement: CLAIM_NEXT_INPUTS, sessionId, record })) as
    | (ClaimRow & { [CLAIM_FOR]: unknown; open: unknown; token: unknown })
    | undefined;
  // The statement answers every request; no row means its result is not what it promises.
  if (answer === undefined) throw new StateCorruptError(`claim of session ${sessionId} returned no row`, { details: { sessionId } });
  const { [CLAIM_FOR]: _for, open, token, ...row } = answer;
  if (row.seq !== null) return decodeClaim(row);
  // Nothing claimed: an empty inbox under a current token, or a fence that did not match.
  if (open === 0 && token === leaseToken) return null;
  throw leaseLost(sessionId, leaseToken, 'claimNextInput');
}

/** A claim's row (input columns, `resumed`, `pendingInputs`, `pendingSteers`, prefixed session columns) as a {@link ClaimedInput}. */
export function decodeClaim(row: ClaimRow): ClaimedInput {
  const { resumed, pendingInputs, pendingSteers, ...columns } = row;
  const inputColumns: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(columns)) if (!key.startsWith(SESSION_PREFIX)) inputColumns[key] = value;
  return {
    input: decodeInput(inputColumns),
    resumed: resumed === true,
    session: decodeSession(unprefixed(columns, SESSION_PREFIX)),
    pendingInputs: pendingInputs === true,
    pendingSteers: pendingSteers === true,
  };
}
