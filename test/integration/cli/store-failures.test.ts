import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCliInProcess } from '../../support/run-cli-process.js';
import pg from 'pg';
import { InfrastructureError } from '../../../src/core/errors/index.js';
import { guardedStoreCall } from '../../../src/core/ports/guard-store.js';
import { PostgresSessionStore } from '../../../src/store/postgres-session-store.js';
import { createLogger } from '../../../src/observability/logger.js';
import { SessionQueue } from '../../../src/producer/session-queue.js';
import { createTestDatabase, uniqueName, type TestDatabase } from '../../support/test-database.js';

/**
 * A Postgres failure reaches a client as `system.infrastructure` naming the operation and what the
 * database said — not as the query builder's error, whose message is the whole statement with its
 * parameters (the CLI printed `Failed query: update "sessions" …` for a cancel).
 */
describe('store failures seen by a client', () => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;

  const cli = (...argv: string[]) => runCliInProcess(argv, env);

  beforeAll(async () => {
    // A database nobody migrated: every statement fails with "relation … does not exist".
    database = await createTestDatabase('store_failures', { migrate: false });
    env = { DATABASE_URL: database.url, REDIS_URL: inject('redisUrl'), LOOPFLEET_QUEUE: uniqueName('q') };
  });

  afterAll(async () => {
    await database?.drop();
  });

  it.each([
    [['cancel', 's1'], 'requestCancelTree'],
    // `history` reads the session first (to say whose child it is, for a child session).
    [['history', 's1'], 'getSession'],
    // `send` reads the tenants' admission rates first (cached for 2 s, docs/tenant-limits.md).
    [['send', 's1', 'a private message'], 'readTenantRates'],
  ])('%j exits 1 with [system.infrastructure] and the cause, never the SQL or the input', async (argv, operation) => {
    const run = await cli(...argv);
    expect(run).toMatchObject({ code: 1, out: '' });
    expect(run.err).toMatch(new RegExp(`^loopfleet ${argv[0]!}: \\[system\\.infrastructure\\] store ${operation} failed: relation "\\w+" does not exist \\(SQLSTATE 42P01\\)\\n$`));
    expect(run.err).not.toMatch(/select|update|insert|private|Failed query/i);
  });

  /** The line a pino logger writes for `failure`, with content redacted or not (LOG_CONTENT). */
  const logged = (failure: unknown, redactContent: boolean): string => {
    const lines: string[] = [];
    createLogger({ level: 'info', format: 'json', redactContent, destination: { write: (line: string) => void lines.push(line) } }).warn({ err: failure }, 'store call failed');
    return lines.join('');
  };

  it('logged, a failed statement shows what Postgres said; a drizzle-built one shows its SQL, and its values only with LOG_CONTENT on', async () => {
    const queue = new SessionQueue({ databaseUrl: database.url, redisUrl: inject('redisUrl'), queueName: uniqueName('q') });
    const prompt = 'a private system prompt';
    try {
      // Raw SQL (one statement with the agent check): Postgres's message, never the values it carried.
      const created = await queue.sessions.create({ id: 's1', systemPrompt: prompt }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(created).toMatchObject({ code: 'system.infrastructure', details: { operation: 'createSession', sqlState: '42P01' } });
      for (const redact of [true, false]) {
        expect(logged(created, redact)).toMatch(/relation \\"\w+\\" does not exist/);
        expect(logged(created, redact)).not.toContain(prompt);
      }
      // Built by drizzle (a store call the client no longer makes, taken as the store's own caller
      // would): its "Failed query" text names the SQL, and its parameters are content.
      const pool = new pg.Pool({ connectionString: database.url, max: 1 });
      const read = await guardedStoreCall('requestCancel', new PostgresSessionStore(pool).requestCancel('secret-session-7')).then(
        () => null,
        (error: unknown) => error,
      );
      await pool.end();
      expect(read).toMatchObject({ code: 'system.infrastructure', details: { operation: 'requestCancel', sqlState: '42P01' } });
      expect(logged(read, true)).toContain('Failed query: update \\"sessions\\"');
      expect(logged(read, true)).not.toContain('secret-session-7');
      expect(logged(read, false)).toContain('secret-session-7');
    } finally {
      await queue.close();
    }
  });

  it('an unreachable Postgres reads as system.infrastructure too, retryable, with the driver error kept as the cause', async () => {
    const queue = new SessionQueue({ databaseUrl: 'postgres://postgres@127.0.0.1:1/nowhere', redisUrl: inject('redisUrl'), queueName: uniqueName('q') });
    try {
      const failure = await queue.cancel('s1').then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(InfrastructureError);
      expect(failure).toMatchObject({ code: 'system.infrastructure', retryable: true, details: { operation: 'requestCancelTree' } });
      expect((failure as Error).message).toMatch(/^store requestCancelTree failed: .*ECONNREFUSED/);
      expect((failure as Error).cause).toBeInstanceOf(Error);
    } finally {
      await queue.close();
    }
  });
});
