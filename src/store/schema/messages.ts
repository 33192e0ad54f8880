import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/**
 * The append-only history. Rows are never rewritten except `state`, which compaction
 * flips to `compacted` (kept for audit, never sent to a model again).
 */
export const messages = pgTable(
  'messages',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    inputSeq: bigint('input_seq', { mode: 'number' }),
    round: integer('round'),
    role: text('role').notNull(),
    /** `message | compact_note | notice | degraded | synthetic_tool_result`. */
    kind: text('kind').notNull().default('message'),
    /** A JSON string (plain text) or an array of content parts. */
    content: jsonb('content').$type<unknown>().notNull(),
    toolCalls: jsonb('tool_calls').$type<unknown[]>(),
    toolCallId: text('tool_call_id'),
    name: text('name'),
    isError: boolean('is_error').notNull().default(false),
    /** `active | compacted`. */
    state: text('state').notNull().default('active'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.seq] }),
    /**
     * The active window is read through this partial index, so loading it costs the same whatever
     * the size of the compacted history.
     */
    index('messages_active_idx')
      .on(t.sessionId, t.seq)
      .where(sql`${t.state} = 'active'`),
    check('messages_role_valid', sql`${t.role} in ('system', 'user', 'assistant', 'tool')`),
    check('messages_state_valid', sql`${t.state} in ('active', 'compacted')`),
    check(
      'messages_kind_valid',
      sql`${t.kind} in ('message', 'compact_note', 'notice', 'degraded', 'synthetic_tool_result')`,
    ),
    check('messages_tool_has_call_id', sql`${t.role} <> 'tool' or ${t.toolCallId} is not null`),
  ],
);
