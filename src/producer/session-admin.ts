import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CreateSessionParams, SessionStore } from '../core/ports/session-store.js';
import { assertSessionId } from '../core/session-id.js';
import type { SessionRecord } from '../core/session-types.js';
import { eventFinishedKey, eventSeqKey, eventStreamKey } from './fleet-keys.js';
import { attemptWithin } from './settle-within.js';

/**
 * `queue.sessions`: explicit session management. Sessions are also created on the fly by the first
 * `add`; create one here to give it a system prompt. `agent`, `metadata` and `config` are stored and
 * returned by `get`, but workers do not apply them yet: every session runs with its worker's profile.
 */
export class SessionAdmin {
  constructor(
    private readonly deps: {
      store: SessionStore;
      redis: Redis;
      queueName: string;
      logger: Logger | null;
      /** Longest wait for Redis when removing the stream, in milliseconds. */
      redisTimeoutMs: number;
      /** Runs an operation unless the queue is closed, and lets `close()` wait for it. */
      run: <T>(work: () => Promise<T>) => Promise<T>;
    },
  ) {}

  /**
   * Creates a session. Throws `session.exists` when the id is taken (its settings would otherwise be
   * silently ignored), `session.invalid_id` or `input.invalid` for bad fields.
   */
  async create(params: CreateSessionParams): Promise<SessionRecord> {
    return this.deps.run(() => this.deps.store.createSession(params));
  }

  /** The stored session, or null when there is none. */
  async get(sessionId: string): Promise<SessionRecord | null> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => this.deps.store.getSession(id));
  }

  /**
   * Deletes the session with everything it owns in Postgres (inputs, messages, tool ledger, usage),
   * then its event stream (with its seq counter and its set of finished inputs, so a session created
   * again under the same id starts afresh). Returns false when there was no such session. A worker
   * running one of its inputs at that moment loses its lease and stops. The stream is removed
   * best-effort: when Redis is down it expires on its own.
   */
  async delete(sessionId: string): Promise<boolean> {
    const id = assertSessionId(sessionId);
    return this.deps.run(() => this.#delete(id));
  }

  async #delete(id: string): Promise<boolean> {
    const deleted = await this.deps.store.deleteSession(id);
    const { queueName } = this.deps;
    const removed = this.deps.redis.del(eventStreamKey(queueName, id), eventSeqKey(queueName, id), eventFinishedKey(queueName, id));
    const attempt = await attemptWithin(removed, this.deps.redisTimeoutMs);
    if (!attempt.ok) this.deps.logger?.warn({ err: attempt.error, sessionId: id }, 'session deleted; its event stream was not (it will expire)');
    return deleted;
  }
}
