import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { drizzle } from 'drizzle-orm/node-postgres';
import { parse as parseConnectionString } from 'pg-connection-string';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';
import { migrationsFolder } from './package-paths.js';

/**
 * Session-level advisory lock key shared by every `loopfleet migrate`, so concurrent runs (three
 * containers starting at once) apply migrations one after another instead of racing on DDL.
 */
const MIGRATION_LOCK_KEY = 7_210_443_551_002_001n;

export interface MigrateOptions {
  /** The database to migrate. */
  databaseUrl: string;
  /** Create the database first if it does not exist (needs CREATEDB). Default false. */
  createDatabase?: boolean;
}

export interface MigrationReport {
  /** Tags of the migrations this run applied, in order (empty when already up to date). */
  applied: string[];
  /** Number of migrations the database has after the run. */
  total: number;
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

/** Applies the committed migrations. Idempotent, and safe to run from several processes at once. */
export async function runMigrations(options: MigrateOptions): Promise<MigrationReport> {
  if (options.createDatabase === true) await ensureDatabase(options.databaseUrl);
  const client = await connect(options.databaseUrl);
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    const before = await appliedCount(client);
    const folder = migrationsFolder();
    await migrate(drizzle(client), { migrationsFolder: folder });
    const after = await appliedCount(client);
    const tags = readJournal(folder).entries.map((entry) => entry.tag);
    // Lets the next waiter in before this connection has closed. The lock is the session's, so
    // closing releases it anyway: an unlock that fails (the connection broke after the migrations
    // committed) changes nothing, and a failed run does not try one, which would only hide its error.
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()]).catch(() => {});
    return { applied: tags.slice(before, after), total: after };
  } finally {
    await disconnect(client);
  }
}

/**
 * A connection of its own (no pool: the advisory lock is held by one session). Its `'error'` listener
 * keeps a connection dropped between statements (a restart, `pg_terminate_backend`) from crashing the
 * process: the statement that was running, or the next one, fails instead.
 */
async function connect(connectionString: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString, application_name: 'loopfleet-migrate', keepAlive: true });
  client.on('error', () => {});
  await client.connect();
  return client;
}

/** Ends the connection; on one already broken there is nothing to end, and nothing to report. */
async function disconnect(client: pg.Client): Promise<void> {
  await client.end().catch(() => {});
}

async function appliedCount(client: pg.Client): Promise<number> {
  const exists = await client.query<{ present: boolean }>(
    "SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS present",
  );
  if (exists.rows[0]?.present !== true) return 0;
  const result = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM drizzle.__drizzle_migrations');
  return Number(result.rows[0]?.n ?? 0);
}

function readJournal(folder: string): Journal {
  return JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as Journal;
}

/** Creates the target database when missing, connecting to the server's `postgres` database. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  // The name as pg itself reads it from the URL (`decodeURI`), so the database created is the one
  // connected to next; `decodeURIComponent` decoded `%2F` that pg leaves as it is.
  const name = parseConnectionString(databaseUrl).database ?? '';
  if (name === '') throw new Error('DATABASE_URL names no database');
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = await connect(admin.toString());
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    try {
      await client.query(`CREATE DATABASE ${quoteIdent(name)}`);
      return true;
    } catch (error) {
      // Another process created it between our check and our CREATE: that is the outcome we wanted.
      if ((error as { code?: string }).code === '42P04' || (error as { code?: string }).code === '23505') return false;
      throw error;
    }
  } finally {
    await disconnect(client);
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
