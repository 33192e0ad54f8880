import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { sessions } from './sessions.js';

/** Durable timers (docs/fleet.md): the row is the truth, the BullMQ delayed job is the alarm clock. */
export const timers = pgTable(
  'timers',
  {
    sessionId: text('session_id')
      .notNull()
      .references(() => sessions.id, { onDelete: 'cascade' }),
    timerId: text('timer_id').notNull(),
    dueAt: timestamp('due_at', { withTimezone: true }).notNull(),
    note: text('note').notNull().default(''),
    /** Milliseconds between firings of a recurring timer; null for a one-shot. */
    everyMs: bigint('every_ms', { mode: 'number' }),
    /** `armed | firing | fired | cancelled`. */
    status: text('status').notNull().default('armed'),
    fireCount: integer('fire_count').notNull().default(0),
    /** `host | agent`. */
    createdBy: text('created_by').notNull().default('host'),
    lastFiredAt: timestamp('last_fired_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.sessionId, t.timerId] }),
    index('timers_armed_due_idx')
      .on(t.dueAt)
      .where(sql`${t.status} = 'armed'`),
    check('timers_status_valid', sql`${t.status} in ('armed', 'firing', 'fired', 'cancelled')`),
    check('timers_created_by_valid', sql`${t.createdBy} in ('host', 'agent')`),
  ],
);
