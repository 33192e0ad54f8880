import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/run-cli.js';
import { createTestDatabase, type TestDatabase } from '../../support/test-database.js';

describe('loopfleet migrate output', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('cli_migrate', { migrate: false });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('does not print a password given in the query string', async () => {
    // The URL's password moved into `?password=`, which pg reads as well as `user:pass@` (a server
    // that trusts local connections is given one it does not need).
    const url = new URL(db.url);
    const password = url.password === '' ? 'lf-query-secret' : decodeURIComponent(url.password);
    url.password = '';
    url.search = `?password=${encodeURIComponent(password)}`;
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['migrate'], { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), env: { DATABASE_URL: url.toString() } });
    expect({ code, err: err.join('') }).toEqual({ code: 0, err: '' });
    expect(out.join('')).toMatch(/\?password=\*\*\*: applied 0000_init/);
    expect(out.join('')).not.toContain(`password=${encodeURIComponent(password)}`);
  });
});
