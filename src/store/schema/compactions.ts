import { bigint, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/** One row per fold: which message seqs were folded into which compact note, and by what model. */
export const compactions = pgTable(
  'compactions',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    /** The seq of the compact-note message this fold produced. */
    noteSeq: bigint('note_seq', { mode: 'number' }).notNull(),
    inputSeq: bigint('input_seq', { mode: 'number' }),
    fromSeq: bigint('from_seq', { mode: 'number' }).notNull(),
    toSeq: bigint('to_seq', { mode: 'number' }).notNull(),
    foldedMessages: integer('folded_messages').notNull(),
    estimatedTokensBefore: integer('estimated_tokens_before').notNull(),
    estimatedTokensAfter: integer('estimated_tokens_after').notNull(),
    model: text('model'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.noteSeq] })],
);
