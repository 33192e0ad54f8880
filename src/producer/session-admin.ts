import type { Redis } from 'ioredis';
import type { RedisConnection } from '../fleet/redis-connection.js';
import type { RedisLayout } from '../fleet/redis-layout.js';
import type { Logger } from 'pino';
import type { ClientStore } from '../core/ports/client-store.js';
import type { CreateSessionParams, ListInputsOptions, ListSessionsOptions, SessionPage } from '../core/ports/session-store.js';
import { assertSessionId } from '../fleet/session-id.js';
import type { InputRecord, SessionRecord } from '../core/session-types.js';
import { EVENT_PUBLISHER_DEFAULTS } from '../events/event-publisher-options.js';
import { eventDeletedKey, eventFinishedKey, eventSeqKey, eventStreamKey } from '../fleet/fleet-keys.js';
import { attemptWithin } from '../fleet/settle-within.js';
import { childSummaries, type ChildSummary } from './session-stats.js';

/**
 * `queue.sessions`: explicit session management. Sessions are also created on the fly by the first
 * `add`; create one here to give it a system prompt. `agent`, `metadata` and `config` are stored and
 * returned by `get`, but workers do not apply them yet: every session runs with its worker's profile.
 */
export class SessionAdmin {
  constructor(
    private readonly deps: {
      store: ClientStore;
      redis: RedisConnection;
      queueName: string;
      /** Where the queue's keys are (its sessions' streams). */
      layout: RedisLayout;
      logger: Logger | null;
      /** Longest wait for Redis when removing the stream, in milliseconds. */
      redisTimeoutMs: number;
      /** Runs an operation unless the queue is closed, and lets `close()` wait for it. */
      run: <T>(work: () => Promise<T>) => Promise<T>;
    },
  ) {}

  /**
   * Creates a session, for `tenant` (default `default`) when given. Throws `session.exists` when the
   * id is taken (its settings would otherwise be silently ignored), `session.invalid_id` or
   * `input.invalid` for bad fields.
   */
  async create(params: CreateSessionParams): Promise<SessionRecord> {
    // On this queue unless the caller names one (another queue's adds are then refused). Anything
    // but an object goes to the store as it is, to be refused there.
    const onQueue = typeof params === 'object' && params !== null ? Object.assign({ queue: this.deps.queueName }, params) : params;
    return this.deps.run(() => this.deps.store.createSession(onQueue));
  }

  /**
   * A page of sessions, newest first, filtered by `tenant`, `agent`, `status` and `idPrefix` (taken
   * literally); `limit` 1–200 (default 50); pass the page's `nextCursor` as `cursor` for the next one
   * (null: none follows). Throws `input.invalid` for a bad filter, limit or cursor.
   */
  async list(options: ListSessionsOptions = {}): Promise<SessionPage> {
    return this.deps.run(() => this.deps.store.listSessions(options));
  }

  /** The stored session, or null when there is none. */
  async get(sessionId: string): Promise<SessionRecord | null> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => this.deps.store.getSession(id));
  }

  /**
   * The session's inputs in seq order, with their status and result (`result.agent`: the agent and
   * version that ran it): a page of them, `afterSeq` / `limit` (default 100, at most 1000), filtered by
   * `status` if given. Empty for a session that does not exist.
   */
  async inputs(sessionId: string, options: ListInputsOptions = {}): Promise<InputRecord[]> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => this.deps.store.listInputs(id, options));
  }

  /**
   * The session's child sessions, started by its `spawn_agent` calls, in spawn order:
   * `[{ sessionId, agent, toolCallId, status }]` (docs/child-sessions.md). Empty for a session with
   * none, or none at all.
   */
  async children(sessionId: string): Promise<ChildSummary[]> {
    const id = assertSessionId(sessionId);
    return childSummaries(await this.deps.run(() => this.deps.store.listChildren(id)));
  }

  /**
   * Deletes the session with everything it owns in Postgres (inputs, messages, tool ledger, usage),
   * then its event stream (with its seq counter and its set of finished inputs, so a session created
   * again under the same id starts afresh). Returns false when there was no such session. A worker
   * running one of its inputs at that moment loses its lease and stops at its next write; until then
   * the events it writes are refused, by a fence on the stream set in the same Redis call that
   * removes it (the session's last lease token: every lease of a session created again under the id
   * has a larger one). The stream is removed best-effort: when Redis is down it expires on its own,
   * and without the fence a running worker's last events may reach a session created again.
   */
  async delete(sessionId: string): Promise<boolean> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => this.#delete(id));
  }

  async #delete(id: string): Promise<boolean> {
    const deleted = await this.deps.store.deleteSession(id);
    // Its child sessions went with it (docs/child-sessions.md): their streams go too.
    const sessions = [{ sessionId: id, leaseToken: deleted?.leaseToken ?? 0 }, ...(deleted?.descendants ?? [])];
    const { queueName } = this.deps;
    const removed = Promise.all(
      sessions.map(({ sessionId, leaseToken }) => {
        const { layout } = this.deps;
        const keys = [eventStreamKey(layout, sessionId), eventSeqKey(layout, sessionId), eventFinishedKey(layout, sessionId), eventDeletedKey(layout, sessionId)];
        return this.deps.redis.eval(REMOVE_STREAM_LUA, keys.length, ...keys, leaseToken, DELETION_FENCE_SECONDS);
      }),
    );
    const attempt = await attemptWithin(removed, this.deps.redisTimeoutMs);
    if (!attempt.ok) this.deps.logger?.warn({ err: attempt.error, sessionId: id }, 'session deleted; its event stream was not, nor fenced (it will expire)');
    return deleted !== null;
  }
}

/**
 * How long a deleted session's fence stays: the default idle expiry of a stream (7 days). A worker
 * stalled past that inside an input of the deleted session could still write its last events.
 */
export const DELETION_FENCE_SECONDS = EVENT_PUBLISHER_DEFAULTS.idleExpirySeconds;

/**
 * KEYS: the session's stream, seq counter, finished set and deletion fence. ARGV: the deleted
 * session's last lease token (0: never leased, nothing to fence), the fence's expiry in seconds.
 * Raises the fence to the token (never lowers it: a late delete of an older session under the id
 * must not let through what a newer fence refuses), then removes the other three keys, in one call:
 * an event written before it is removed with the stream, one written after it is refused.
 */
const REMOVE_STREAM_LUA = `
local token = tonumber(ARGV[1])
if token > 0 then
  local fence = tonumber(redis.call('GET', KEYS[4]) or '0')
  if token > fence then redis.call('SET', KEYS[4], ARGV[1], 'EX', ARGV[2]) else redis.call('EXPIRE', KEYS[4], ARGV[2]) end
end
return redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
`;
