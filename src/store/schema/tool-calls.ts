import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/**
 * The tool ledger (I5): a call is recorded `started` before it runs and moved to a final
 * status when it ends. A `started` row found on takeover is in doubt.
 */
export const toolCalls = pgTable(
  'tool_calls',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    toolCallId: text('tool_call_id').notNull(),
    inputSeq: bigint('input_seq', { mode: 'number' }).notNull(),
    round: integer('round').notNull(),
    name: text('name').notNull(),
    args: jsonb('args').$type<unknown>(),
    /** `started | completed | failed | in_doubt | aborted`. */
    status: text('status').notNull(),
    attempts: integer('attempts').notNull().default(1),
    /** Given to the handler so its side effects can be deduplicated: `<sessionId>:<toolCallId>`. */
    idempotencyKey: text('idempotency_key').notNull(),
    errorCode: text('error_code'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull().defaultNow(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    durationMs: integer('duration_ms'),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.toolCallId] }),
    index('tool_calls_open_idx')
      .on(t.sessionId)
      .where(sql`${t.status} in ('started', 'in_doubt')`),
    check('tool_calls_status_valid', sql`${t.status} in ('started', 'completed', 'failed', 'in_doubt', 'aborted')`),
  ],
);
