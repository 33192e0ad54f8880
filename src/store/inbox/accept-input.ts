import type pg from 'pg';
import { z } from 'zod';
import { StateConflictError } from '../../core/errors/index.js';
import type { AcceptedInput, AcceptInputParams } from '../../core/ports/session-store.js';
import { validateAcceptInput, type ValidatedAccept } from './accept-input-validation.js';
import { parseRow } from '../rows/parse-row.js';
import { agentMismatch, agentNotFound, queueMismatch, tenantMismatch } from '../agents/agent-refusals.js';
import type { RowBatcher } from '../batching/row-batcher.js';
import { ACCEPT_INPUTS, FIND_ACCEPTED_INPUT_SQL, INPUT_ID_UNIQUE_INDEX } from './accept-input-sql.js';

const seqRowSchema = z.object({ seq: z.number().int().positive(), tenant: z.string() });

/** A row of {@link ACCEPT_INPUTS}: the seq the input got, or why it was refused. */
const acceptRowSchema = z.union([
  z.object({ seq: z.number().int().positive(), refused: z.null(), tenant: z.string() }),
  z.object({
    seq: z.null(),
    refused: z.enum(['agent.not_found', 'session.queue_mismatch', 'session.tenant_mismatch', 'session.agent_mismatch']),
    sessionAgent: z.string().nullable(),
    sessionQueue: z.string().nullable(),
  }),
]);

/** SQLSTATE `unique_violation`. */
const UNIQUE_VIOLATION = '23505';

/**
 * Makes an input durable (I1, I2) in one round trip on the hot path: a single
 * autocommit statement creates-or-locks the session row, advances its seq allocator and inserts the
 * input with the new seq ({@link ACCEPT_INPUTS}); accepts of other sessions made at the same moment
 * share that statement (`batcher`). The row lock is held until the statement commits, so concurrent
 * accepts of a session run one after another, and seqs are gapless and follow commit order.
 *
 * A repeated input id fails the statement on the unique index, which rolls back the allocator too,
 * so no seq is used up (the batcher sends the others again without it); a second statement then
 * reads the original seq (`duplicate: true`). The PostgreSQL server logs each such failure as an
 * ERROR (with the session and input id): expected noise from producer retries, not a fault.
 */
export async function acceptInput(pool: pg.Pool, batcher: RowBatcher, params: AcceptInputParams): Promise<AcceptedInput> {
  const input = validateAcceptInput(params);
  const inserted = await insertInput(batcher, input);
  if (inserted !== null) return accepted(input, inserted, false);
  const existing = await findAccepted(pool, input);
  if (existing !== null) return accepted(input, existing, true);
  // The unique index saw the input committed, yet it is gone: its session was deleted in between.
  throw new StateConflictError(`input ${input.inputId} of session ${input.sessionId} could not be inserted`);
}

/**
 * The seq the input got (and the session's tenant), or null when its id was already taken in this session. Throws
 * `session.queue_mismatch`, `agent.not_found`, `session.tenant_mismatch` or `session.agent_mismatch` when
 * the statement refused the queue, agent or tenant it names.
 */
async function insertInput(batcher: RowBatcher, input: ValidatedAccept): Promise<SeqAndTenant | null> {
  const record = `{"session_id":${JSON.stringify(input.sessionId)},"input_id":${JSON.stringify(input.inputId)},"kind":${JSON.stringify(input.kind)},"mode":${JSON.stringify(input.mode)},"payload":${input.payloadText},"origin_job_id":${JSON.stringify(input.originJobId)},"trace_context":${input.traceContextText ?? 'null'},"agent":${JSON.stringify(input.agent)},"tenant":${JSON.stringify(input.tenant)},"queue":${JSON.stringify(input.queue)}}`;
  let row: unknown;
  try {
    row = await batcher.submit({ statement: ACCEPT_INPUTS, sessionId: input.sessionId, record });
  } catch (error) {
    if (isInputIdTaken(error)) return null;
    throw error;
  }
  // Every input of the statement gets its row (the allocator always locks or creates the session).
  if (row === undefined) throw new StateConflictError(`input ${input.inputId} of session ${input.sessionId} was not inserted`);
  const parsed = parseRow(acceptRowSchema, row, `input ${input.sessionId}`);
  if (parsed.refused === null) return { seq: parsed.seq, tenant: parsed.tenant };
  // A queue, a tenant or an agent is refused only when the input names one.
  if (parsed.refused === 'session.queue_mismatch') throw queueMismatch(input.sessionId, input.queue ?? '', parsed.sessionQueue);
  if (parsed.refused === 'session.tenant_mismatch') throw tenantMismatch(input.sessionId, input.tenant ?? '');
  const agent = input.agent ?? '';
  throw parsed.refused === 'agent.not_found' ? agentNotFound(input.sessionId, agent) : agentMismatch(input.sessionId, agent, parsed.sessionAgent);
}

/** Only this one violation means "duplicate"; any other error, even another unique one, is real. */
function isInputIdTaken(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, constraint } = error as { code?: unknown; constraint?: unknown };
  return code === UNIQUE_VIOLATION && constraint === INPUT_ID_UNIQUE_INDEX;
}

async function findAccepted(pool: pg.Pool, input: ValidatedAccept): Promise<SeqAndTenant | null> {
  const found = await pool.query(FIND_ACCEPTED_INPUT_SQL, [input.sessionId, input.inputId]);
  const row: unknown = found.rows[0];
  return row === undefined ? null : parseRow(seqRowSchema, row, `input ${input.sessionId}/${input.inputId}`);
}

interface SeqAndTenant {
  seq: number;
  tenant: string;
}

function accepted(input: ValidatedAccept, found: SeqAndTenant, duplicate: boolean): AcceptedInput {
  return { sessionId: input.sessionId, seq: found.seq, inputId: input.inputId, duplicate, tenant: found.tenant };
}
