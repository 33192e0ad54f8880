import { Queue } from 'bullmq';
import { QueueShards } from '../../src/fleet/queue-shards.js';
import { connectionLayout, openRedis, redisTarget, type RedisConnection } from '../../src/fleet/redis-connection.js';
import type pg from 'pg';
import { inject } from 'vitest';
import { loadConfig, type ResolvedConfig } from '../../src/config/index.js';
import { contentText } from '../../src/core/messages.js';
import type { SessionStore } from '../../src/core/ports/session-store.js';
import type { AcceptDeps } from '../../src/fleet/accept-input.js';
import { eventStreamKey } from '../../src/fleet/fleet-keys.js';
import { createLogger } from '../../src/observability/logger.js';
import { runMigrations } from '../../src/store/postgres/migrate.js';
import { createPgPool } from '../../src/store/postgres/pool.js';
import { PostgresSessionStore } from '../../src/store/postgres-session-store.js';
import { startWorker, type RunningWorker, type StartWorkerOptions } from '../../src/worker/start-worker.js';
import { createTestDatabase, uniqueName, type TestDatabase } from './test-database.js';
import { WorkerProcesses } from './worker-process.js';

/**
 * One test file's fleet: a private database, a unique queue name (so its Redis keys are its own),
 * in-process workers, and producer-side handles. `close()` stops everything it started.
 */
export class FleetFixture {
  readonly workers: RunningWorker[] = [];
  /** Real `loopfleet worker` processes of this fleet (environment: {@link processEnv}); killed by `close()`. */
  readonly processes = new WorkerProcesses(() => this.processEnv());
  private constructor(
    readonly db: TestDatabase,
    /** The environment the configuration was loaded from: what a worker process needs (`processEnv`). */
    readonly env: Record<string, string>,
    readonly config: ResolvedConfig,
    readonly pool: pg.Pool,
    readonly store: SessionStore,
    readonly redis: RedisConnection,
    /** The dispatch queues (one on a single node; `LOOPFLEET_QUEUE_SHARDS` on a cluster). */
    readonly shards: QueueShards,
  ) {}

  /** Shard 0's BullMQ queue: the only one on a single Redis node. */
  get queue(): Queue {
    return this.shards.home;
  }

  /**
   * `options.through` reaches the database another way (a pooler in front of it: test/support/pgbouncer.ts):
   * the database is created on the server, then migrated, and used by every pool of the fleet — the
   * fixture's, its workers' and its worker processes' — at the URL `through` makes of its own.
   */
  static async create(label: string, env: Record<string, string> = {}, options: { through?: (url: string) => string } = {}): Promise<FleetFixture> {
    // LOOPFLEET_TEST_PGBOUNCER=1 (global-setup.ts): every fleet through the run's PgBouncer, unless the test chose its own way.
    const bouncerPort = inject('pgbouncerPort');
    const through = options.through ?? (bouncerPort > 0 ? (url: string) => viaPort(url, bouncerPort) : undefined);
    const db = await createTestDatabase(label, { migrate: through === undefined });
    const databaseUrl = through === undefined ? db.url : through(db.url);
    if (through !== undefined) await runMigrations({ databaseUrl });
    const fullEnv = {
      ...(through !== undefined && options.through === undefined ? { DATABASE_POOLER: 'transaction' } : {}),
      DATABASE_URL: databaseUrl,
      REDIS_URL: inject('redisUrl'),
      LOOPFLEET_QUEUE: uniqueName(label),
      LLM_PROVIDER: 'scripted',
      LEASE_TTL_MS: '3000',
      WORKER_CONCURRENCY: '4',
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      ...env,
    };
    const config = loadConfig(fullEnv);
    const pool = createPgPool(config.databaseUrl, { pooler: config.worker.pooler });
    const target = redisTarget(config);
    const redis = openRedis(target, { maxRetriesPerRequest: null });
    // Tests that restart a private Redis see connection errors: ioredis reconnects by itself.
    redis.on('error', () => undefined);
    const shards = QueueShards.open(connectionLayout(redis, config.queueName, config.queueShards), redis);
    for (const queue of shards.queues) queue.on('error', () => undefined);
    return new FleetFixture(db, fullEnv, config, pool, new PostgresSessionStore(pool), redis, shards);
  }

  /**
   * The environment of a `loopfleet worker` process of this fleet: the fixture's own (same database,
   * Redis and queue) with `LOG_LEVEL=info` so the process's log lines can be waited on, plus `extra`.
   */
  processEnv(extra: Record<string, string> = {}): Record<string, string> {
    return { ...this.env, LOG_LEVEL: 'info', ...extra };
  }

  /** Producer-side dependencies of `acceptAndKick` (the fleet's accept path). */
  get acceptDeps(): AcceptDeps {
    return { store: this.store, queue: this.shards, maxInputBytes: this.config.worker.maxInputBytes };
  }

  /** The texts of a session's history, as `role: text` strings, in seq order. */
  async transcript(sessionId: string): Promise<string[]> {
    const rows = await this.store.loadHistory(sessionId);
    return rows.map((row) => `${row.message.role}: ${contentText(row.message.content)}`);
  }

  async startWorker(options: StartWorkerOptions = {}): Promise<RunningWorker> {
    const worker = await startWorker(this.config, {
      logger: createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', format: 'json', redactContent: true }),
      healthServer: false,
      ...options,
    });
    this.workers.push(worker);
    return worker;
  }

  /** Deletes this fleet's own keys matching `pattern` (never anything else: Redis is shared). */
  async deleteKeys(pattern: string): Promise<number> {
    if (!pattern.startsWith(this.config.queueName) && !pattern.startsWith(`bull:${this.config.queueName}`)) {
      throw new Error(`refusing to delete keys outside this fleet's queue: ${pattern}`);
    }
    let deleted = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) deleted += await this.redis.del(...keys);
    } while (cursor !== '0');
    return deleted;
  }

  /** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
  async waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  /** Waits until every input of `sessionId` has a terminal status. */
  async waitForSessionIdle(sessionId: string, expectedInputs: number, timeoutMs = 30_000) {
    return this.waitFor(
      `${expectedInputs} finished inputs of ${sessionId}`,
      async () => {
        const inputs = await this.store.listInputs(sessionId, { limit: 1000 });
        const done = inputs.filter((input) => input.status === 'done' || input.status === 'failed' || input.status === 'cancelled');
        return inputs.length >= expectedInputs && done.length === inputs.length ? inputs : undefined;
      },
      timeoutMs,
    );
  }

  /**
   * Like {@link waitForSessionIdle}, and also until the session's stream holds an `input_finished` event
   * for every input: the event is published just after the terminal commit, so a test that reads the
   * stream must wait for it rather than for Postgres alone.
   */
  async waitForSessionFinished(sessionId: string, expectedInputs: number, timeoutMs = 30_000) {
    const inputs = await this.waitForSessionIdle(sessionId, expectedInputs, timeoutMs);
    await this.waitFor(
      `${inputs.length} input_finished events of ${sessionId}`,
      async () => {
        const entries = await this.redis.xrange(eventStreamKey(this.shards.layout, sessionId), '-', '+');
        const finished = entries.filter(([, fields]) => fields[fields.indexOf('type') + 1] === 'input_finished');
        return finished.length >= inputs.length ? true : undefined;
      },
      timeoutMs,
    );
    return inputs;
  }

  async close(): Promise<void> {
    await this.processes.killAll();
    await Promise.allSettled(this.workers.map((worker) => worker.close({ graceMs: 2_000 })));
    for (const queue of this.shards.queues) await queue.obliterate({ force: true }).catch(() => {});
    await this.deleteKeys(`${this.config.queueName}:*`).catch(() => {});
    await this.shards.close();
    await this.redis.quit();
    await this.pool.end();
    await this.db.drop();
  }
}

/** `url` with its host and port replaced by loopback:`port`. */
function viaPort(url: string, port: number): string {
  const through = new URL(url);
  through.hostname = '127.0.0.1';
  through.port = String(port);
  return through.toString();
}
