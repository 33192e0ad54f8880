import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { quoteIdent, runMigrations } from '../../src/store/postgres/migrate.js';

export interface TestDatabase {
  /** Connection string of this file's private, migrated database. */
  url: string;
  name: string;
  /** Drops the database (terminating stray connections). Call from afterAll. */
  drop(): Promise<void>;
}

/** A short, unique, identifier-safe name for databases, queues and key prefixes of one test file. */
export function uniqueName(label: string): string {
  const safe = label.toLowerCase().replace(/[^a-z0-9]+/g, '_').slice(0, 24);
  return `lf_${safe}_${randomBytes(4).toString('hex')}`;
}

/** Creates a fresh database for one test file, optionally migrated. */
export async function createTestDatabase(label: string, options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('postgresAdminUrl');
  const name = uniqueName(label);
  await withAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${quoteIdent(name)}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const dbUrl = url.toString();
  if (options.migrate !== false) await runMigrations({ databaseUrl: dbUrl });
  return {
    url: dbUrl,
    name,
    drop: () =>
      withAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`)).then(() => {}),
  };
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
