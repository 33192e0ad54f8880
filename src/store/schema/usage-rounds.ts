import { bigint, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/**
 * Token usage per round: one row for every round of every input, tool rounds
 * included, keyed by input so later inputs never overwrite earlier ones.
 */
export const usageRounds = pgTable(
  'usage_rounds',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    inputSeq: bigint('input_seq', { mode: 'number' }).notNull(),
    round: integer('round').notNull(),
    provider: text('provider').notNull(),
    model: text('model').notNull(),
    llmCalls: integer('llm_calls').notNull().default(1),
    promptTokens: integer('prompt_tokens').notNull().default(0),
    completionTokens: integer('completion_tokens').notNull().default(0),
    /** Cache read: prompt tokens served from the provider's prompt cache. */
    cachedTokens: integer('cached_tokens').notNull().default(0),
    /** Cache write: prompt tokens written to the provider's prompt cache (Anthropic's cache creation). */
    cacheWriteTokens: integer('cache_write_tokens').notNull().default(0),
    reasoningTokens: integer('reasoning_tokens').notNull().default(0),
    totalTokens: integer('total_tokens').notNull().default(0),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.inputSeq, t.round] })],
);
