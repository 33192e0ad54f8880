import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgSequence, pgTable, text, timestamp, type AnyPgColumn } from 'drizzle-orm/pg-core';

/**
 * The source of every fencing token (I3): each lease acquisition takes `nextval` of this one
 * database-wide sequence, so a token is never handed out twice — not even to a session id that was
 * deleted and created again, whose old holder may still be alive and writing. Tokens of a session
 * strictly increase but are not consecutive. `cache 1` matters: with a larger cache each connection
 * would draw from its own block and a later acquisition could get a smaller token.
 */
export const leaseTokenSeq = pgSequence('lease_token_seq', { startWith: 1, minValue: 1, increment: 1, cache: 1 });

/**
 * The source of window epochs ({@link sessions} `window_epoch`): one database-wide sequence, so an
 * epoch is never handed out twice — not to a session that was deleted and created again either.
 */
export const windowEpochSeq = pgSequence('window_epoch_seq', { startWith: 1, minValue: 1, increment: 1 });

/**
 * One row per session: identity, agent profile, the per-session sequence allocators, the lease with
 * its fencing token, the pending tool-call state and cumulative stats (docs/store.md).
 */
export const sessions = pgTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    agent: text('agent').notNull().default('default'),
    /** Whose session it is (1–128 of `[A-Za-z0-9_.:-]`); set at creation, never changed. */
    tenant: text('tenant').notNull().default('default'),
    /**
     * The queue (`LOOPFLEET_QUEUE`) the session runs on; set at creation, never changed (docs/fleet.md,
     * "Several queues on one database"). `''`: created before queues were recorded; its next add records it.
     */
    queue: text('queue').notNull().default(''),
    systemPrompt: text('system_prompt'),
    metadata: jsonb('metadata').$type<Record<string, unknown>>().notNull().default({}),
    config: jsonb('config').$type<Record<string, unknown>>().notNull().default({}),
    /** `idle | running | waiting_for_input | waiting_for_children` — derived from the inbox, kept for cheap listing. */
    status: text('status').notNull().default('idle'),
    /** Last input seq handed out; the next accepted input gets `next_seq + 1`. */
    nextSeq: bigint('next_seq', { mode: 'number' }).notNull().default(0),
    /** Last message seq written; messages are gapless per session. */
    nextMessageSeq: bigint('next_message_seq', { mode: 'number' }).notNull().default(0),
    leaseOwner: text('lease_owner'),
    /**
     * The fencing token of the current (or last) lease: `nextval('lease_token_seq')` on every
     * acquisition, so never reused (I3); 0 before the first one.
     */
    leaseToken: bigint('lease_token', { mode: 'number' }).notNull().default(0),
    leaseExpiresAt: timestamp('lease_expires_at', { withTimezone: true }),
    /** Pending tool-call state: set when the assistant asks for tools, cleared when all are answered. */
    pending: jsonb('pending').$type<Record<string, unknown>>(),
    /** Durable copy of a cancel request; the drain checks it (docs/fleet.md). */
    cancelRequestedAt: timestamp('cancel_requested_at', { withTimezone: true }),
    /** Set on a child session when its parent's tree was cancelled (`requestCancelTree`); never cleared. */
    cascadeCancelledAt: timestamp('cascade_cancelled_at', { withTimezone: true }),
    /**
     * The session that spawned this one (`spawnChild`), null for a session a producer created.
     * Deleting a parent deletes its whole tree (the foreign key cascades).
     */
    parentSessionId: text('parent_session_id').references((): AnyPgColumn => sessions.id, { onDelete: 'cascade' }),
    /** The top of a child's tree; null for a root (its own id is its root). */
    rootSessionId: text('root_session_id'),
    /** 0 for a root, its parent's depth + 1 for a child. */
    depth: integer('depth').notNull().default(0),
    /** A child's spawning call: the parent input's seq, the tool call id, and whether the call waits. Null for a root. */
    spawnInputSeq: bigint('spawn_input_seq', { mode: 'number' }),
    spawnToolCallId: text('spawn_tool_call_id'),
    spawnWait: boolean('spawn_wait'),
    /**
     * An input of the session may have ended without its `input_finished` event (I6): set by every
     * commit that ends an input, cleared only by a release whose holder published the event of every
     * input it ended. The next drain checks the stream (and republishes) only while it is set, so a
     * cleanly handed-over session costs no check. True for rows that predate it.
     */
    finishesOwed: boolean('finishes_owed').notNull().default(true),
    /**
     * Changes whenever a message of the session leaves the active window — a fold (compaction) takes
     * `nextval('window_epoch_seq')` in the same statement — and starts from the sequence too, so a
     * session created again under an old id never has an epoch it had before. Messages are otherwise
     * only appended, with seqs above every existing one: a window read at epoch E up to seq N is still
     * exact while the epoch is E, plus the active rows above N. That is what a worker's window cache
     * checks (docs/store.md, "The window cache"). An out-of-band edit of `messages` must take a new
     * epoch too.
     */
    windowEpoch: bigint('window_epoch', { mode: 'number' }).notNull().default(sql`nextval('window_epoch_seq')`),
    statInputs: bigint('stat_inputs', { mode: 'number' }).notNull().default(0),
    statRounds: bigint('stat_rounds', { mode: 'number' }).notNull().default(0),
    statLlmCalls: bigint('stat_llm_calls', { mode: 'number' }).notNull().default(0),
    statToolCalls: bigint('stat_tool_calls', { mode: 'number' }).notNull().default(0),
    statPromptTokens: bigint('stat_prompt_tokens', { mode: 'number' }).notNull().default(0),
    statCompletionTokens: bigint('stat_completion_tokens', { mode: 'number' }).notNull().default(0),
    statCachedTokens: bigint('stat_cached_tokens', { mode: 'number' }).notNull().default(0),
    statCacheWriteTokens: bigint('stat_cache_write_tokens', { mode: 'number' }).notNull().default(0),
    statReasoningTokens: bigint('stat_reasoning_tokens', { mode: 'number' }).notNull().default(0),
    statTotalTokens: bigint('stat_total_tokens', { mode: 'number' }).notNull().default(0),
    /** What the session's LLM calls cost, in picodollars (10^-12 USD); unpriced calls count 0. */
    statCostPicoUsd: bigint('stat_cost_picousd', { mode: 'number' }).notNull().default(0),
    firstInputAt: timestamp('first_input_at', { withTimezone: true }),
    lastInputAt: timestamp('last_input_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    check('sessions_id_format', sql`${t.id} ~ '^[A-Za-z0-9_.:-]{1,128}$'`),
    check('sessions_status_valid', sql`${t.status} in ('idle', 'running', 'waiting_for_input', 'waiting_for_children')`),
    check('sessions_depth_valid', sql`${t.depth} >= 0`),
    check('sessions_tenant_format', sql`${t.tenant} ~ '^[A-Za-z0-9_.:-]{1,128}$'`),
    index('sessions_lease_expires_idx').on(t.leaseExpiresAt),
    // The sweeper's third part: released sessions whose last finish may still be unpublished (a
    // handful at most, so the index stays tiny).
    // A session's children in spawn order (`listChildren`), and the count of an input's children (`spawnChild`).
    index('sessions_parent_idx')
      .on(t.parentSessionId, t.createdAt)
      .where(sql`${t.parentSessionId} IS NOT NULL`),
    // The session list, newest first (`listSessions`): all sessions, and one tenant's.
    index('sessions_created_idx').on(t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    index('sessions_tenant_created_idx').on(t.tenant, t.createdAt.desc().nullsFirst(), t.id.desc().nullsFirst()),
    // Inputs a tenant runs at once: its sessions with a lease (`maxConcurrentInputs`).
    index('sessions_tenant_leased_idx').on(t.tenant).where(sql`${t.leaseExpiresAt} IS NOT NULL`),
    index('sessions_finishes_owed_idx').on(t.updatedAt).where(sql`${t.finishesOwed} AND ${t.leaseExpiresAt} IS NULL`),
  ],
);
