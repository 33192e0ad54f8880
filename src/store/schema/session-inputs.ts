import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/**
 * The inbox (docs/fleet.md): every accepted input, durable before `add` returns, numbered by a
 * per-session `seq` allocated under the session row lock so that seq order is commit order.
 */
export const sessionInputs = pgTable(
  'session_inputs',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    /** Caller-supplied (or derived) idempotency key, unique per session. */
    inputId: text('input_id').notNull(),
    /** `send | resume | timer | child`. */
    kind: text('kind').notNull(),
    /** `queue | steer | interrupt`: how an input that arrives mid-run joins. */
    mode: text('mode').notNull().default('queue'),
    payload: jsonb('payload').$type<Record<string, unknown>>().notNull(),
    /** `pending | running | waiting | done | failed | cancelled`. */
    status: text('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /**
     * Steering: the seq of the running input this one was delivered into. It is
     * `done` from delivery on, and gets the host's result and error when the host finishes (I6).
     */
    steeredInto: bigint('steered_into', { mode: 'number' }),
    /** A `waiting` input: the ids of the `spawn_agent` calls whose child results it waits for (a JSON array). Null otherwise. */
    awaiting: jsonb('awaiting').$type<string[]>(),
    result: jsonb('result').$type<Record<string, unknown>>(),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    originJobId: text('origin_job_id'),
    /**
     * The producer's span as a W3C trace context (`{ traceparent, tracestate? }`), continued by the
     * input's span in the worker (docs/tracing.md). Null when tracing was off at the add.
     */
    traceContext: jsonb('trace_context').$type<{ traceparent: string; tracestate?: string }>(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }).notNull().defaultNow(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.seq] }),
    uniqueIndex('session_inputs_input_id_uq').on(t.sessionId, t.inputId),
    /**
     * Claiming the next input touches only open rows, however long the inbox history. A `waiting`
     * input is open: it holds its place in seq order until its child results are in.
     */
    index('session_inputs_open_idx')
      .on(t.sessionId, t.seq)
      .where(sql`${t.status} in ('pending', 'running', 'waiting')`),
    /** Finishing a host input finds the inputs steered into it here, not by scanning the inbox. */
    index('session_inputs_steered_into_idx')
      .on(t.sessionId, t.steeredInto)
      .where(sql`${t.steeredInto} is not null`),
    /** The sweeper's scan: oldest pending inputs fleet-wide. */
    index('session_inputs_pending_age_idx')
      .on(t.acceptedAt)
      .where(sql`${t.status} = 'pending'`),
    check('session_inputs_kind_valid', sql`${t.kind} in ('send', 'resume', 'timer', 'child')`),
    check('session_inputs_mode_valid', sql`${t.mode} in ('queue', 'steer', 'interrupt')`),
    check('session_inputs_status_valid', sql`${t.status} in ('pending', 'running', 'waiting', 'done', 'failed', 'cancelled')`),
    check('session_inputs_seq_positive', sql`${t.seq} > 0`),
    /** Only a delivered (hence `done`) steering input has a host. */
    check('session_inputs_steered_done', sql`${t.steeredInto} is null or ${t.status} = 'done'`),
  ],
);
