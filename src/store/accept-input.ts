import type pg from 'pg';
import { z } from 'zod';
import { StateConflictError } from '../core/errors/index.js';
import type { AcceptedInput, AcceptInputParams } from '../core/ports/session-store.js';
import { validateAcceptInput, type ValidatedAccept } from './accept-input-validation.js';
import { parseRow } from './rows/parse-row.js';
import { withConnection } from './connection.js';
import { ACCEPT_INPUT_SQL, FIND_ACCEPTED_INPUT_SQL, INPUT_ID_UNIQUE_INDEX } from './sql/accept-input.js';

const seqRowSchema = z.object({ seq: z.number().int().positive() });

/** SQLSTATE `unique_violation`. */
const UNIQUE_VIOLATION = '23505';

/**
 * Makes an input durable (DESIGN.md §4.1, I1–I2) in one round trip on the hot path: a single
 * autocommit statement creates-or-locks the session row, advances its seq allocator and inserts the
 * input with the new seq ({@link ACCEPT_INPUT_SQL}). The row lock is held until that statement
 * commits, so concurrent accepts of a session run one after another, and seqs are gapless and follow
 * commit order.
 *
 * A repeated input id fails that statement on the unique index, which rolls back the allocator too,
 * so no seq is used up; a second statement then reads the original seq (`duplicate: true`). The
 * PostgreSQL server logs each such failure as an ERROR (with the session and input id): expected noise
 * from producer retries, not a fault.
 *
 * It runs on a checked-out connection rather than through `pool.query`, because the pool discards a
 * connection whose query failed: every duplicate would then cost a reconnect.
 */
export async function acceptInput(pool: pg.Pool, params: AcceptInputParams): Promise<AcceptedInput> {
  const input = validateAcceptInput(params);
  return withConnection(pool, async (client) => {
    const seq = await insertInput(client, input);
    if (seq !== null) return accepted(input, seq, false);
    const existing = await findAccepted(client, input);
    if (existing !== null) return accepted(input, existing, true);
    // The unique index saw the input committed, yet it is gone: its session was deleted in between.
    throw new StateConflictError(`input ${input.inputId} of session ${input.sessionId} could not be inserted`);
  });
}

/** The seq the input got, or null when its id was already taken in this session. */
async function insertInput(client: pg.PoolClient, input: ValidatedAccept): Promise<number | null> {
  let inserted: pg.QueryResult;
  try {
    inserted = await client.query({
      name: 'loopfleet_accept_input',
      text: ACCEPT_INPUT_SQL,
      values: [input.sessionId, input.inputId, input.kind, input.mode, input.payloadText, input.originJobId],
    });
  } catch (error) {
    if (isInputIdTaken(error)) return null;
    throw error;
  }
  return parseRow(seqRowSchema, inserted.rows[0], `input ${input.sessionId}`).seq;
}

/** Only this one violation means "duplicate"; any other error, even another unique one, is real. */
function isInputIdTaken(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === UNIQUE_VIOLATION && constraint === INPUT_ID_UNIQUE_INDEX;
}

async function findAccepted(client: pg.PoolClient, input: ValidatedAccept): Promise<number | null> {
  const found = await client.query(FIND_ACCEPTED_INPUT_SQL, [input.sessionId, input.inputId]);
  const row: unknown = found.rows[0];
  return row === undefined ? null : parseRow(seqRowSchema, row, `input ${input.sessionId}/${input.inputId}`).seq;
}

function accepted(input: ValidatedAccept, seq: number, duplicate: boolean): AcceptedInput {
  return { sessionId: input.sessionId, seq, inputId: input.inputId, duplicate };
}
