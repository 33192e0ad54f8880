import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runCliInProcess } from '../../support/run-cli-process.js';
import { InfrastructureError } from '../../../src/core/errors/index.js';
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
    [['cancel', 's1'], 'requestCancel'],
    [['history', 's1'], 'loadHistory'],
    [['send', 's1', 'a private message'], 'acceptInput'],
  ])('%j exits 1 with [system.infrastructure] and the cause, never the SQL or the input', async (argv, operation) => {
    const run = await cli(...argv);
    expect(run).toMatchObject({ code: 1, out: '' });
    expect(run.err).toMatch(new RegExp(`^loopfleet ${argv[0]!}: \\[system\\.infrastructure\\] store ${operation} failed: relation "\\w+" does not exist \\(SQLSTATE 42P01\\)\\n$`));
    expect(run.err).not.toMatch(/select|update|insert|private|Failed query/i);
  });

  it('logged, a failed statement shows its SQL and what Postgres said, but not the values it carried unless LOG_CONTENT is on', async () => {
    const queue = new SessionQueue({ databaseUrl: database.url, redisUrl: inject('redisUrl'), queueName: uniqueName('q') });
    const prompt = 'a private system prompt';
    try {
      const failure = await queue.sessions.create({ id: 's1', systemPrompt: prompt }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: 'system.infrastructure', details: { operation: 'createSession', sqlState: '42P01' } });
      const logged = (redactContent: boolean): string => {
        const lines: string[] = [];
        createLogger({ level: 'info', format: 'json', redactContent, destination: { write: (line: string) => void lines.push(line) } }).warn({ err: failure }, 'store call failed');
        return lines.join('');
      };
      const redacted = logged(true);
      expect(redacted).toContain('relation \\"sessions\\" does not exist');
      expect(redacted).toContain('Failed query: insert into \\"sessions\\"');
      expect(redacted).not.toContain(prompt);
      expect(logged(false)).toContain(prompt);
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
      expect(failure).toMatchObject({ code: 'system.infrastructure', retryable: true, details: { operation: 'requestCancel' } });
      expect((failure as Error).message).toMatch(/^store requestCancel failed: .*ECONNREFUSED/);
      expect((failure as Error).cause).toBeInstanceOf(Error);
    } finally {
      await queue.close();
    }
  });
});
