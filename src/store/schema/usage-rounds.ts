import { bigint, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
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
    /**
     * What the round cost, in picodollars (10^-12 USD), from the price table the worker had; null when
     * the model has no price (and for rows written before prices existed).
     */
    costPicoUsd: bigint('cost_picousd', { mode: 'number' }),
    /** The session's tenant and agent, copied so usage reports read this table alone, from an index. */
    tenant: text('tenant').notNull().default('default'),
    agent: text('agent').notNull().default('default'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.inputSeq, t.round] }),
    // Usage reports: one tenant's month, or every tenant's.
    index('usage_rounds_tenant_time_idx').on(t.tenant, t.createdAt),
    index('usage_rounds_time_idx').on(t.createdAt),
  ],
);
