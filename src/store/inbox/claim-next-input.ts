import type { ClaimedInput, FencedParams } from '../../core/ports/session-store.js';
import { StateCorruptError } from '../../core/errors/index.js';
import { assertSessionId } from '../../fleet/session-id.js';
import { assertLeaseToken } from '../postgres/arguments.js';
import { leaseLost } from '../fencing/fence.js';
import { decodeInput } from '../rows/input-row.js';
import { decodeSession } from '../rows/session-row.js';
import type { RowBatcher } from '../batching/row-batcher.js';
import { CLAIM_FOR, CLAIM_NEXT_INPUTS, SESSION_PREFIX } from './claim-next-input-sql.js';

interface ClaimRow extends Record<string, unknown> {
  seq: unknown;
  resumed: unknown;
  woken: unknown;
  pendingInputs: unknown;
  pendingSteers: unknown;
}

/**
 * Fenced. Starts (resumes, or wakes) the session's lowest open input, in one statement shared with other
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
  if (answer.seq !== null) return decodeClaim(answer);
  // Nothing claimed: an empty inbox under a current token, or a fence that did not match.
  if (answer.open === 0 && answer.token === leaseToken) return null;
  throw leaseLost(sessionId, leaseToken, 'claimNextInput');
}

/** Columns of a claim's row that are neither the input's nor (prefixed) the session's. */
const CLAIM_EXTRAS: ReadonlySet<string> = new Set(['resumed', 'woken', 'pendingInputs', 'pendingSteers', CLAIM_FOR, 'open', 'token', 'finishesOwed', 'sawOpen']);

/**
 * A claim's row (input columns, prefixed session columns, `resumed`, `woken`, `pendingInputs`,
 * `pendingSteers`, and any of the statements' own extras) as a {@link ClaimedInput}: one pass splits
 * the columns (a claim is decoded per input on the hot path).
 */
export function decodeClaim(row: ClaimRow): ClaimedInput {
  const input: Record<string, unknown> = {};
  const session: Record<string, unknown> = {};
  for (const key in row) {
    if (key.startsWith(SESSION_PREFIX)) session[key.slice(SESSION_PREFIX.length)] = row[key];
    else if (!CLAIM_EXTRAS.has(key)) input[key] = row[key];
  }
  return {
    input: decodeInput(input),
    resumed: row.resumed === true,
    woken: row.woken === true,
    session: decodeSession(session),
    pendingInputs: row.pendingInputs === true,
    pendingSteers: row.pendingSteers === true,
  };
}
