import type pg from 'pg';
import { z } from 'zod';
import { StateConflictError } from '../core/errors/index.js';
import type { AcceptedInput, AcceptInputParams } from '../core/ports/session-store.js';
import { validateAcceptInput, type ValidatedAccept } from './accept-input-validation.js';
import { parseRow } from './rows/parse-row.js';
import { FIND_ACCEPTED_INPUT_SQL, INSERT_INPUT_SQL, LOCK_SESSION_FOR_ACCEPT_SQL } from './sql/accept-input.js';
import { withTransaction } from './transaction.js';

const lockedRowSchema = z.object({ nextSeq: z.number().int().nonnegative() });
const seqRowSchema = z.object({ seq: z.number().int().positive() });

/**
 * Makes an input durable (DESIGN.md §4.1, I1–I2). In one transaction: create-or-lock the session row,
 * return the original seq when the input id was seen before (no seq is used up), otherwise insert the
 * input with the next seq. The session row lock orders concurrent accepts, so seqs are gapless and
 * follow commit order.
 */
export async function acceptInput(pool: pg.Pool, params: AcceptInputParams): Promise<AcceptedInput> {
  const input = validateAcceptInput(params);
  return withTransaction(pool, async (client) => {
    const locked = await client.query(LOCK_SESSION_FOR_ACCEPT_SQL, [input.sessionId]);
    const { nextSeq } = parseRow(lockedRowSchema, locked.rows[0], `session ${input.sessionId}`);
    const existing = await findAccepted(client, input);
    if (existing !== null) return accepted(input, existing, true);
    const inserted = await client.query(INSERT_INPUT_SQL, [
      input.sessionId,
      nextSeq + 1,
      input.inputId,
      input.kind,
      input.mode,
      input.payloadText,
      input.originJobId,
    ]);
    if (inserted.rows[0] !== undefined) {
      return accepted(input, parseRow(seqRowSchema, inserted.rows[0], `input ${input.sessionId}`).seq, false);
    }
    // The unique index caught an insert made without the session lock; report what is stored.
    const raced = await findAccepted(client, input);
    if (raced !== null) return accepted(input, raced, true);
    throw new StateConflictError(`input ${input.inputId} of session ${input.sessionId} could not be inserted`);
  });
}

async function findAccepted(client: pg.PoolClient, input: ValidatedAccept): Promise<number | null> {
  const found = await client.query(FIND_ACCEPTED_INPUT_SQL, [input.sessionId, input.inputId]);
  const row: unknown = found.rows[0];
  return row === undefined ? null : parseRow(seqRowSchema, row, `input ${input.sessionId}/${input.inputId}`).seq;
}

function accepted(input: ValidatedAccept, seq: number, duplicate: boolean): AcceptedInput {
  return { sessionId: input.sessionId, seq, inputId: input.inputId, duplicate };
}
