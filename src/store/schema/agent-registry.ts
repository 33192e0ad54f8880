import { index, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The agent registry (docs/store.md): one row per agent a worker serves. A worker replaces its rows
 * when it starts, touches `seen_at` every minute and marks them `stopped_at` when it stops (kept, so
 * a restart does not make its agents unknown for a moment); the sweeper deletes the rows of workers
 * not seen for a day.
 */
export const agentRegistry = pgTable(
  'agent_registry',
  {
    workerId: text('worker_id').notNull(),
    name: text('name').notNull(),
    /** The hash of the agent's definition the worker computed. */
    version: text('version').notNull(),
    provider: text('provider').notNull(),
    model: text('model').notNull(),
    /** The agent's tool names, a JSON array of strings. */
    tools: jsonb('tools').$type<string[]>().notNull().default([]),
    registeredAt: timestamp('registered_at', { withTimezone: true }).notNull().defaultNow(),
    seenAt: timestamp('seen_at', { withTimezone: true }).notNull().defaultNow(),
    /** When the worker stopped (closed cleanly); null while it runs, or when it was killed. */
    stoppedAt: timestamp('stopped_at', { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.workerId, t.name] }),
    // An add naming an agent looks it up by name; the sweeper's prune by age.
    index('agent_registry_name_idx').on(t.name, t.seenAt),
    index('agent_registry_seen_idx').on(t.seenAt),
  ],
);
