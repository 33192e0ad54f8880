import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { HISTORY_PAGE } from '../../../src/cli/commands/history.js';
import { runCli } from '../../../src/cli/run-cli.js';
import { uniqueName } from '../../support/test-database.js';
import { openStoreFixture, seedLongHistory, type StoreFixture } from '../store/store-fixture.js';

/**
 * `loopfleet history` on a long session reads it in pages of {@link HISTORY_PAGE}, never in one
 * unbounded read, and takes `--after` / `--limit`. No worker: the history is written straight into
 * Postgres (2,500 messages, the first 500 folded away).
 */
describe('loopfleet history, paged', () => {
  let fx: StoreFixture;
  let env: NodeJS.ProcessEnv;

  /** Runs the CLI in-process; resolves with the exit code, the output, and the LIMIT/after of every history read. */
  async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string; reads: Array<[unknown, unknown]> }> {
    const out: string[] = [];
    const err: string[] = [];
    const reads: Array<[unknown, unknown]> = [];
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const [text, values] = args as [unknown, unknown[] | undefined];
      if (typeof text === 'string' && text.includes('FROM messages')) reads.push([values?.[1], values?.[2]]);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      const code = await runCli(argv, { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), env });
      return { code, out: out.join(''), err: err.join(''), reads };
    } finally {
      pg.Client.prototype.query = query;
    }
  }

  const seqsOf = (out: string) => out.trim().split('\n').map((line) => Number(line.split(' ')[0]));
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  beforeAll(async () => {
    fx = await openStoreFixture('cli_history');
    env = { DATABASE_URL: fx.db.url, REDIS_URL: inject('redisUrl'), LOOPFLEET_QUEUE: uniqueName('cli_history') };
    await seedLongHistory(fx, 'long', 2500, 500);
  });

  afterAll(async () => {
    await fx?.close();
  });

  it(`prints every active message, reading ${HISTORY_PAGE} at a time`, async () => {
    const run = await cli('history', 'long');
    expect(run).toMatchObject({ code: 0, err: '' });
    expect(seqsOf(run.out)).toEqual(range(501, 2500));
    expect(run.out.split('\n')[0]).toBe('501 user: message 501');
    // Active seqs 501–2500: two full pages, then an empty one that ends it.
    expect(run.reads).toEqual([
      [0, HISTORY_PAGE],
      [1500, HISTORY_PAGE],
      [2500, HISTORY_PAGE],
    ]);
  });

  it('--all --json prints the whole history as JSON lines, page by page', async () => {
    const run = await cli('history', 'long', '--all', '--json');
    expect(run.code).toBe(0);
    const rows = run.out.trim().split('\n').map((line) => JSON.parse(line) as { seq: number; state: string });
    expect(rows.map((row) => row.seq)).toEqual(range(1, 2500));
    expect(rows[0]!.state).toBe('compacted');
    expect(run.reads.every(([, limit]) => limit === HISTORY_PAGE)).toBe(true);
    expect(run.reads).toHaveLength(3);
  });

  it('--after and --limit print that slice, reading no more than asked', async () => {
    const slice = await cli('history', 'long', '--after', '2400', '--limit', '50');
    expect(seqsOf(slice.out)).toEqual(range(2401, 2450));
    expect(slice.reads).toEqual([[2400, 50]]);

    const across = await cli('history', 'long', '--all', '--after', '100', '--limit', '1200');
    expect(seqsOf(across.out)).toEqual(range(101, 1300));
    expect(across.reads).toEqual([
      [100, HISTORY_PAGE],
      [1100, 200],
    ]);

    const tail = await cli('history', 'long', '--after', '2498');
    expect(seqsOf(tail.out)).toEqual([2499, 2500]);
    expect(await cli('history', 'long', '--after', '2500')).toMatchObject({ code: 0, out: '' });
  });

  it('a session that does not exist exits 3 (not found) with session.not_found, --after or not', async () => {
    expect(await cli('history', 'nobody', '--after', '5', '--limit', '10')).toMatchObject({ code: 3, err: expect.stringContaining('[session.not_found]') });
  });
});
