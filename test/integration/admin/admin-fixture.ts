import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { inject } from 'vitest';
import { buildGateway } from '../../../src/gateway/build-gateway.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { createPgPool } from '../../../src/store/postgres/pool.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../../support/test-database.js';
import { runCliInProcess } from '../../support/run-cli-process.js';
import { bearer, gatewayConfig, token } from '../gateway/gateway-fixture.js';

/**
 * The operator surfaces without a worker (none is needed to set budgets or read usage): a private
 * database, a pool on it for direct SQL, a queue, a gateway app, and the CLI's environment.
 */
export class AdminFixture {
  private constructor(
    readonly db: TestDatabase,
    readonly pool: pg.Pool,
    readonly queue: SessionQueue,
    readonly app: FastifyInstance,
    readonly env: NodeJS.ProcessEnv,
  ) {}

  static async create(label: string): Promise<AdminFixture> {
    const db = await createTestDatabase(label);
    const pool = createPgPool(db.url, { applicationName: `loopfleet-test-${label}` });
    const queueName = uniqueName(label);
    const redisUrl = inject('redisUrl');
    const queue = new SessionQueue({ databaseUrl: db.url, redisUrl, queueName });
    const app = await buildGateway({ queue, config: gatewayConfig(), pingDatabase: async () => void (await pool.query('select 1')) });
    return new AdminFixture(db, pool, queue, app, { DATABASE_URL: db.url, REDIS_URL: redisUrl, LOOPFLEET_QUEUE: queueName });
  }

  /** Runs the CLI in this process against the fixture's database. */
  cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    return runCliInProcess(argv, this.env);
  }

  /** The `Authorization` header of a token with these claims. */
  async headers(claims: Record<string, unknown>): Promise<Record<string, string>> {
    return bearer(await token(claims));
  }

  /** Moves the database clock budget windows are computed on (`loopfleet_now()`); null puts it back. */
  async setClock(at: string | null): Promise<void> {
    const body = at === null ? 'SELECT now()' : `SELECT '${new Date(at).toISOString()}'::timestamptz`;
    await this.pool.query(`CREATE OR REPLACE FUNCTION loopfleet_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$ ${body} $$`);
  }

  async close(): Promise<void> {
    await this.app.close();
    await this.queue.close();
    await this.pool.end();
    await this.db.drop();
  }
}
